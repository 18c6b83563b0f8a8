package eventcopy_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/expd/expd/clickhouse/clickhousetest"
	"github.com/expd/expd/eventcopy"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/results"
	"github.com/expd/expd/results/enginetest"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/vocab"
)

// A copy of the database's events and scores into the two-shard
// ClickHouse cluster, interrupted after three batches and resumed from
// its checkpoint, stores every event and score once: the counts match,
// the per-user values and result rows of the experiment are the same on
// both engines, and copying again (or again from the start, the
// checkpoint lost) stores nothing more.
func TestCopyIsResumableAndStoresEachEventOnce(t *testing.T) {
	db := testenv.DB(t)
	s := clickhousetest.Store(t, true)
	ctx := t.Context()
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	cfg := resultstest.Config("copy")
	shared := false
	cfg.Metrics = append(cfg.Metrics, experiments.Metric{Name: "helpfulness", Kind: vocab.Mean, Category: "secondary", MethodDefault: "welch_t",
		MetricVersion: 1, SharedOrgWide: &shared, Source: &experiments.MetricSource{EventType: vocab.TypeScore, Score: "helpfulness"}})
	exp := resultstest.Experiment(t, db, org.ID, cfg)
	at := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	events := resultstest.Events(org.ID, exp.ID, resultstest.Users(40, 11), at)
	sql := ingest.SQLEvents{DB: db}
	if n, err := sql.Insert(ctx, events); err != nil || n != len(events) {
		t.Fatalf("Insert = %d, %v", n, err)
	}
	var grades []scores.Row
	for i, e := range events {
		if e.Type == vocab.TypeModelCall && i%2 == 0 {
			grades = append(grades, scores.Row{OrgID: org.ID, CallID: e.EventID, Name: "helpfulness", Source: "judge",
				Value: float64(i%5) + 0.25, Ts: e.Ts.Add(time.Second)})
		}
	}
	if n, err := sql.UpsertScores(ctx, grades, at.Add(time.Minute)); err != nil || n != len(grades) {
		t.Fatalf("UpsertScores = %d, %v", n, err)
	}

	const batch = 50
	cut, cancel := context.WithCancel(ctx)
	_, err := eventcopy.Copy(cut, db, s, "test", eventcopy.Options{Batch: batch, Progress: func(p eventcopy.Progress) {
		if p.Kind == "events" && p.Read == 3*batch {
			cancel() // interrupted after its third batch
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted copy: %v; want context canceled", err)
	}
	if ids, err := s.StoredIDs(ctx, org.ID); err != nil || len(ids) != 3*batch {
		t.Fatalf("after the interruption %d events stored, %v; want %d", len(ids), err, 3*batch)
	}

	res, err := eventcopy.Copy(ctx, db, s, "test", eventcopy.Options{Batch: batch})
	if err != nil {
		t.Fatal(err)
	}
	if res.Events.Read != int64(len(events)) || res.Events.Stored != int64(len(events)-3*batch) || res.Scores.Stored != int64(len(grades)) {
		t.Fatalf("resumed copy %+v; want %d events read, %d stored, %d scores", res, len(events), len(events)-3*batch, len(grades))
	}
	checkStoredOnce(t, s, org.ID, events)

	again, err := eventcopy.Copy(ctx, db, s, "test", eventcopy.Options{Batch: batch})
	if err != nil || again.Events.Stored != 0 || again.Scores.Stored != 0 || again.Events.Read != int64(len(events)) {
		t.Fatalf("a finished copy run again: %+v, %v; want nothing read or stored", again, err)
	}
	if err := db.Exec("DELETE FROM event_copy_checkpoints").Error; err != nil {
		t.Fatal(err)
	}
	over, err := eventcopy.Copy(ctx, db, s, "test", eventcopy.Options{Batch: batch})
	if err != nil || over.Events.Read != int64(len(events)) || over.Events.Stored != 0 || over.Scores.Stored != 0 {
		t.Fatalf("a copy from the start over a full target: %+v, %v; want every row read and none stored", over, err)
	}
	checkStoredOnce(t, s, org.ID, events)

	// The same per-user values and result rows from both engines.
	ms, err := metrics.Resolve(ctx, metrics.Store{DB: db}, org.ID, cfg.Metrics)
	if err != nil {
		t.Fatal(err)
	}
	w := results.NewWindow(at.Add(-time.Hour), at.Add(time.Hour), 30)
	want, _, err := results.SQL{DB: db}.Aggregate(ctx, org.ID, exp.ID, w, resultstest.Arms, ms, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := s.Aggregate(ctx, org.ID, exp.ID, w, resultstest.Arms, ms, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, arm := range resultstest.Arms {
		if len(want.Arms[arm].UserIDs) != 40 {
			t.Fatalf("arm %s: %d users on the database; want 40", arm, len(want.Arms[arm].UserIDs))
		}
		if err := enginetest.SameJSON(got.Arms[arm], want.Arms[arm]); err != nil {
			t.Errorf("arm %s on ClickHouse after the copy: %v", arm, err)
		}
	}
}

func checkStoredOnce(t *testing.T, s interface {
	StoredIDs(context.Context, string) (map[string]int, error)
}, orgID string, events []ingest.EventRow) {
	t.Helper()
	ids, err := s.StoredIDs(t.Context(), orgID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(events) {
		t.Errorf("%d events stored; want %d", len(ids), len(events))
	}
	for _, e := range events {
		if ids[e.EventID] != 1 {
			t.Errorf("event %s stored %d times; want once", e.EventID, ids[e.EventID])
		}
	}
}
