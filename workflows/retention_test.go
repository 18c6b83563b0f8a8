package workflows_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"gorm.io/gorm"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/clickhouse/clickhousetest"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/temporaltest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/results"
	expdworker "github.com/expd/expd/worker"
	"github.com/expd/expd/workflows"
)

func TestRetentionPurgesExpiredEventsAndNightlyRunsButKeepsManualRuns(t *testing.T) {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t)) // free plan: 30 days
	now := time.Now().UTC()
	old, recent := now.AddDate(0, 0, -40), now.AddDate(0, 0, -2)
	var events []ingest.EventRow
	for i, ts := range []time.Time{old, old, recent} {
		events = append(events, ingest.EventRow{OrgID: org.ID, EventID: string(rune('a' + i)), Type: "exposure",
			ExperimentID: "00000000-0000-0000-0000-0000000000e1", UserID: "u", Variant: "a", Ts: ts, ReceivedAt: ts, Source: "api"})
	}
	if err := db.Create(&events).Error; err != nil {
		t.Fatal(err)
	}
	runs := []results.Key{results.NightlyKey(old), results.NightlyKey(recent), results.ManualKey(old)}
	for _, k := range runs {
		r := results.Run{ExperimentID: events[0].ExperimentID, ComputedFor: k.ComputedFor, OrgID: org.ID, Kind: k.Kind, WorkflowID: "wf",
			ExperimentVersion: 1, WindowStart: old, WindowEnd: k.WindowEnd, StartedAt: k.WindowEnd}
		if err := results.StartRun(context.Background(), db, r); err != nil {
			t.Fatal(err)
		}
	}

	tenv := temporaltest.Start(t)
	tenv.NewWorker(func(r worker.Registry) { expdworker.Register(r, &activities.Activities{DB: db}) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out workflows.RetentionResult
	tenv.Execute(ctx, t, client.StartWorkflowOptions{}, workflows.Retention, workflows.RetentionInput{AsOf: now}, &out)
	if out.EventsDeleted != 2 || out.RunsDeleted != 1 {
		t.Fatalf("retention result %+v, want 2 events and 1 nightly run deleted", out)
	}
	var left []ingest.EventRow
	db.Where("org_id = ?", org.ID).Find(&left)
	if len(left) != 1 || left[0].EventID != "c" {
		t.Fatalf("events left: %+v, want only the recent one", left)
	}
	for i, k := range runs {
		_, err := results.LoadRun(context.Background(), db, org.ID, events[0].ExperimentID, k.ComputedFor)
		if kept := err == nil; kept != (i > 0) {
			t.Errorf("run %s kept=%v (err %v)", k.ComputedFor, kept, err)
		}
	}
}

// TestRetentionDropsWholeDaysAndDeletesOnlyThePartialEdge: a day only an
// expired org has rows in goes as a whole partition; a day another org
// still keeps stays, and only the expired org's rows leave it. On
// PostgreSQL's day partitions and on ClickHouse's (the two-shard
// cluster). On PostgreSQL the ids of a dropped day may be stored again;
// ClickHouse keeps claims in partitions of 30 days, dropped once none of
// their days is left (clickhouse.TestDropDayDropsTheClaimsWithTheirLastDay).
// On both the kept ids are still claimed.
func TestRetentionDropsWholeDaysAndDeletesOnlyThePartialEdge(t *testing.T) {
	for _, engine := range []struct {
		name string
		open func(t *testing.T, db *gorm.DB) (ingest.EventStore, *ingest.Writer)
		// droppedIDsFree: a dropped day's ids are unclaimed at once.
		droppedIDsFree bool
	}{
		{"postgres", func(t *testing.T, db *gorm.DB) (ingest.EventStore, *ingest.Writer) {
			if os.Getenv("DATABASE_URL") == "" {
				t.Skip("partitions exist on PostgreSQL only; set DATABASE_URL")
			}
			return ingest.SQLEvents{DB: db}, ingest.NewWriter(db, ingest.Options{})
		}, true},
		{"clickhouse", func(t *testing.T, db *gorm.DB) (ingest.EventStore, *ingest.Writer) {
			s := clickhousetest.Store(t, true)
			return s, ingest.NewEngineWriter(db, s, ingest.Options{})
		}, false},
	} {
		t.Run(engine.name, func(t *testing.T) {
			db := testenv.DB(t)
			events, w := engine.open(t, db)
			checkRetentionDropsWholeDays(t, db, events, w, engine.droppedIDsFree)
		})
	}
}

func checkRetentionDropsWholeDays(t *testing.T, db *gorm.DB, events ingest.EventStore, w *ingest.Writer, droppedIDsFree bool) {
	free := testenv.NewOrg(t, db, testenv.Signer(t)).ID // 30 days
	kept := testenv.NewOrg(t, db, testenv.Signer(t)).ID
	if err := db.Exec("UPDATE orgs SET plan = 'enterprise' WHERE id = ?", kept).Error; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	now := time.Now().UTC()
	whole, edge, recent := now.AddDate(0, 0, -40), now.AddDate(0, 0, -45), now.AddDate(0, 0, -2)
	for _, day := range []time.Time{whole, edge} {
		if _, err := ingest.EnsurePartitions(ctx, db, day, day); err != nil {
			t.Fatal(err)
		}
	}
	const experiment = "00000000-0000-0000-0000-0000000000e1"
	row := func(org string, ts time.Time, i int) ingest.EventRow {
		return ingest.EventRow{OrgID: org, EventID: fmt.Sprintf("%s-%d", ts.Format(time.DateOnly), i), Type: "exposure",
			ExperimentID: experiment, UserID: fmt.Sprintf("u%d", i), Variant: "a", Ts: ts, Source: "api"}
	}
	write := func(org string, ts time.Time, n int) {
		var rows []ingest.EventRow
		for i := range n {
			rows = append(rows, row(org, ts, i))
		}
		if _, err := w.Write(ctx, ingest.Batch{Tenant: ingest.Tenant{OrgID: org, Plan: plans.Enterprise}, Rows: rows}); err != nil {
			t.Fatal(err)
		}
	}
	write(free, whole, 30)
	write(free, edge, 20)
	write(kept, edge, 10)
	write(free, recent, 5)

	tenv := temporaltest.Start(t)
	tenv.NewWorker(func(r worker.Registry) { expdworker.Register(r, &activities.Activities{DB: db, Events: events}) })
	var out workflows.RetentionResult
	tenv.Execute(ctx, t, client.StartWorkflowOptions{}, workflows.Retention, workflows.RetentionInput{AsOf: now}, &out)
	if out.PartitionsDropped != 1 || out.EventsDeleted != 50 {
		t.Fatalf("retention %+v, want 1 partition dropped and 30+20 events deleted", out)
	}
	days, err := events.(ingest.DayPartitions).Days(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(days, ingest.DayOf(whole)) || !slices.Contains(days, ingest.DayOf(edge)) {
		t.Fatalf("days %v: want the whole day dropped and the edge day kept", days)
	}
	count := func(org string) int {
		read, err := events.Read(ctx, ingest.ReadFilter{OrgID: org, ExperimentID: experiment, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(read)
	}
	if n := count(free); n != 5 {
		t.Errorf("free org keeps %d events; want the 5 recent", n)
	}
	if n := count(kept); n != 10 {
		t.Errorf("enterprise org keeps %d events; want 10", n)
	}
	// A kept id is still a duplicate; a dropped one is new again where
	// the claims went with the day.
	if n, err := events.Insert(ctx, []ingest.EventRow{row(kept, edge, 0)}); err != nil || n != 0 {
		t.Errorf("Insert of a kept id = %d, %v; want 0 (a duplicate)", n, err)
	}
	if droppedIDsFree {
		if n, err := events.Insert(ctx, []ingest.EventRow{row(free, whole, 0)}); err != nil || n != 1 {
			t.Errorf("Insert of a dropped id = %d, %v; want it stored again", n, err)
		}
	}
}

func TestEventPartitionsCreatesTheComingWeekOnce(t *testing.T) {
	if os.Getenv("DATABASE_URL") == "" {
		t.Skip("partitions exist on PostgreSQL only; set DATABASE_URL")
	}
	db := testenv.DB(t)
	tenv := temporaltest.Start(t)
	tenv.NewWorker(func(r worker.Registry) { expdworker.Register(r, &activities.Activities{DB: db}) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	asOf := time.Now().UTC().AddDate(0, 0, 30) // the migration covered a week from today
	for attempt, want := range []int{workflows.PartitionsAheadDays + 2, 0} {
		var out activities.EnsurePartitionsResult
		tenv.Execute(ctx, t, client.StartWorkflowOptions{}, workflows.EventPartitions, workflows.EventPartitionsInput{AsOf: asOf}, &out)
		if len(out.Created) != want {
			t.Fatalf("run %d created %v, want %d days", attempt+1, out.Created, want)
		}
	}
}
