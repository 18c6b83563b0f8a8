package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/api"
	"github.com/expd/expd/clickhouse"
	"github.com/expd/expd/clickhouse/clickhousetest"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/temporaltest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results"
	"github.com/expd/expd/results/enginetest"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/vocab"
	"github.com/expd/expd/workflows"
)

// onClickHouse puts an env's event writes and reads, the API's and the
// worker's, on s, as `expd api` and `expd worker` do with CLICKHOUSE_URL.
func onClickHouse(s *clickhouse.Store) (func(*activities.Activities), func(*api.Deps)) {
	acts := func(a *activities.Activities) {
		a.Ingest, a.Events, a.Aggregator = ingest.NewEngineWriter(a.DB, s, ingest.Options{}), s, s
	}
	deps := func(d *api.Deps) {
		d.Ingest, d.Events, d.Aggregator = ingest.NewEngineWriter(d.DB, s, ingest.Options{}), s, s
	}
	return acts, deps
}

// e2eScenario is what one run of the ingest-and-results scenario left:
// the org, its experiment and the results of its manual and nightly runs
// as the results route served them.
type e2eScenario struct {
	org             testenv.Org
	experimentID    string
	events          int // events stored (scores not counted)
	manual, nightly map[string]any
}

// runIngestAndResultsScenario ingests the same synthetic experiment
// through every write route (POST /v1/events, the NDJSON import, signed
// business events, POST /v1/scores), then runs it manually (POST runs)
// and nightly (the org-wide DailyResults workflow for today) and returns
// both results bodies.
func runIngestAndResultsScenario(t *testing.T, env *testenv.Env, tenv *temporaltest.Env) e2eScenario {
	t.Helper()
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	cfg := resultstest.Config("clickhouse-e2e")
	shared := false
	cfg.Metrics = append(cfg.Metrics, experiments.Metric{Name: "helpfulness", Kind: vocab.Mean, Category: "secondary", MethodDefault: "welch_t",
		MetricVersion: 1, SharedOrgWide: &shared, Source: &experiments.MetricSource{EventType: vocab.TypeScore, Score: "helpfulness"}})
	var exp experimentBody
	env.Do(t, http.MethodPost, "/v1/experiments", cfg, admin...).ExpectJSON(t, http.StatusCreated, &exp)

	// After the creation (the window's start).
	at := time.Now().UTC()
	users := resultstest.Users(90, 32)
	var live, imported []ingest.EventRow
	var business []ingest.EventRow
	var scores []map[string]any
	for i := range users {
		evs := resultstest.Events(org.ID, exp.ID, users[i:i+1], at)
		switch i % 3 {
		case 0:
			live = append(live, evs...)
		case 1:
			imported = append(imported, evs...)
		default: // the conversion and revenue through the signed webhook
			for _, e := range evs {
				if e.Type == vocab.TypeBusinessEvent {
					business = append(business, e)
				} else {
					live = append(live, e)
				}
			}
		}
		for k, e := range evs {
			if e.Type == vocab.TypeModelCall && (i+k)%2 == 0 {
				s := score(e.EventID, "helpfulness", float64((i*7+k)%5)+0.5, at.Add(100*time.Millisecond))
				s["source"] = "judge"
				scores = append(scores, s)
			}
		}
	}
	resultstest.Post(t, env, org.PublishableKey, live)

	path := filepath.Join(t.TempDir(), "events.ndjson")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for _, e := range imported {
		if err := enc.Encode(resultstest.Wire(e)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var imp importBody
	if r := importFile(t, env, org.SecretKey, path); r.Status != http.StatusAccepted {
		t.Fatalf("import: %d %s", r.Status, r.Body)
	} else if r.JSON(t, &imp); imp.Accepted != len(imported) {
		t.Fatalf("import accepted %d of %d: %s", imp.Accepted, len(imported), r.Body)
	}

	secret := issueSecret(t, env, org)
	// A business event's time is its webhook-timestamp, whole seconds: in
	// the next second, it falls after every user's exposure (in at's).
	time.Sleep(time.Until(at.Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
	for i, e := range business {
		payload, _ := json.Marshal(map[string]any{"experiment_id": e.ExperimentID, "user_id": e.UserID, "variant": e.Variant,
			"business_metric": *e.BusinessMetric, "value": *e.Value})
		r := signedPost(t, env, secret.WebhookPath, secret.Secret, fmt.Sprintf("msg_%s_%d", exp.ID, i), time.Now(), payload)
		if r.Status != http.StatusAccepted {
			t.Fatalf("business event %d: %d %s", i, r.Status, r.Body)
		}
	}
	for start := 0; start < len(scores); start += 200 {
		if r := postScores(t, env, org.SecretKey, scores[start:min(start+200, len(scores))]...); r.Status != http.StatusAccepted {
			t.Fatalf("scores: %d %s", r.Status, r.Body)
		}
	}
	time.Sleep(1100 * time.Millisecond) // the manual run's instant (whole seconds) falls after every event

	out := e2eScenario{org: org, experimentID: exp.ID, events: len(live) + len(imported) + len(business)}
	metrics := len(cfg.Metrics)
	run := startRun(t, env, admin, exp.ID)
	waitForResultsRun(t, env, admin, exp.ID, run, metrics)
	env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID+"/results?day="+run, nil, admin...).ExpectJSON(t, http.StatusOK, &out.manual)

	today := results.NightlyKey(time.Now()).ComputedFor
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	daily, err := tenv.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: tenv.TaskQueue}, workflows.DailyResults, workflows.DailyResultsInput{Day: today})
	if err != nil {
		t.Fatal(err)
	}
	var totals workflows.DailyResultsResult
	if err := daily.Get(ctx, &totals); err != nil {
		t.Fatalf("nightly: %v", err)
	}
	if totals.Completed != 1 || totals.Failed != 0 {
		t.Fatalf("nightly totals %+v, want the one experiment completed", totals)
	}
	env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID+"/results?day="+today, nil, admin...).ExpectJSON(t, http.StatusOK, &out.nightly)
	return out
}

// The whole path on PostgreSQL (the control plane) and the two-shard
// ClickHouse cluster (the events) with in-process Temporal: every write
// route, a manual run and the nightly give result rows equal (1e-9
// relative) to the same scenario on PostgreSQL alone; the events sit in
// ClickHouse (none in PostgreSQL's events table), on both shards.
func TestClickHouseClusterEndToEndMatchesPostgres(t *testing.T) {
	if os.Getenv("DATABASE_URL") == "" && os.Getenv("CI") != "true" {
		t.Skip("the comparison is against PostgreSQL (DATABASE_URL)")
	}
	s := clickhousetest.Store(t, true)
	if s.Shards() < 2 {
		t.Fatalf("the test cluster has %d shards; want 2", s.Shards())
	}

	pgEnv, pgTemporal := testenv.NewWithWorker(t, nil)
	onPG := runIngestAndResultsScenario(t, pgEnv, pgTemporal)

	acts, deps := onClickHouse(s)
	chEnv, chTemporal := testenv.NewWithWorker(t, acts, deps)
	onCH := runIngestAndResultsScenario(t, chEnv, chTemporal)

	for _, c := range []struct {
		name      string
		got, want map[string]any
	}{{"manual", onCH.manual, onPG.manual}, {"nightly", onCH.nightly, onPG.nightly}} {
		for _, key := range []string{"metrics", "srm_gate", "srm"} {
			if err := enginetest.SameJSON(c.got[key], c.want[key]); err != nil {
				t.Errorf("%s run, %s: ClickHouse differs from PostgreSQL alone: %v", c.name, key, err)
			}
		}
		if ms, _ := c.got["metrics"].([]any); len(ms) != 4 {
			t.Errorf("%s run: %d metric rows, want 4", c.name, len(ms))
		}
	}

	if n := countRows(t, chEnv, "org_id = ?", onCH.org.ID); n != 0 {
		t.Errorf("%d events in PostgreSQL with the events on ClickHouse; want 0", n)
	}
	perShard, err := s.CountPerShard(t.Context(), onCH.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(perShard) != 2 || perShard[0] == 0 || perShard[1] == 0 || perShard[0]+perShard[1] != uint64(onCH.events) {
		t.Errorf("events per shard %v; want %d over both shards", perShard, onCH.events)
	}
}

// A ClickHouse shard down: POST /v1/events answers 503 with Retry-After
// (storage_unavailable) for batches with users on it, every event acked
// before is still stored, and once the shard is back the refused batches
// are stored, each event once. The test runs its own cluster: it stops a
// server.
func TestEventsRefusedWhileAClickHouseShardIsDown(t *testing.T) {
	c := clickhousetest.StartCluster(t)
	s, _ := c.Store(t)
	_, deps := onClickHouse(s)
	f := newIngestFixture(t, deps)
	batch := func(round int) []map[string]any {
		out := make([]map[string]any, 40) // 40 users: both shards have some
		for i := range out {
			out[i] = exposure("exp", fmt.Sprintf("u-%d-%d", round, i), "control", time.Now())
		}
		return out
	}
	idsOf := func(b []map[string]any) []string {
		var out []string
		for _, e := range b {
			out = append(out, e["event_id"].(string))
		}
		return out
	}
	before := batch(0)
	if a := accepted(t, postEvents(t, f.env, f.org.PublishableKey, before...)); a.Accepted != len(before) {
		t.Fatalf("accepted %d of %d", a.Accepted, len(before))
	}

	c.StopShard(t, 1)
	var refused [][]map[string]any
	for round := 1; round <= 3; round++ {
		b := batch(round)
		r := postEvents(t, f.env, f.org.PublishableKey, b...)
		p := testenv.ExpectProblem(t, r, http.StatusServiceUnavailable)
		if p.Code != "storage_unavailable" || r.Header.Get("Retry-After") == "" {
			t.Fatalf("shard down: problem %+v, Retry-After %q; want storage_unavailable with Retry-After", p, r.Header.Get("Retry-After"))
		}
		refused = append(refused, b)
	}
	c.StartShard(t, 1)

	// The client retries what was refused, as Retry-After asks, until
	// the writer's connections to the shard are back.
	want := idsOf(before)
	for _, b := range refused {
		deadline := time.Now().Add(time.Minute)
		for {
			r := postEvents(t, f.env, f.org.PublishableKey, b...)
			if r.Status == http.StatusAccepted {
				break
			}
			testenv.ExpectProblem(t, r, http.StatusServiceUnavailable)
			if time.Now().After(deadline) {
				t.Fatalf("still refused a minute after the shard came back: %s", r.Body)
			}
			time.Sleep(200 * time.Millisecond)
		}
		want = append(want, idsOf(b)...)
	}
	stored, err := s.StoredIDs(t.Context(), f.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range want {
		if stored[id] != 1 {
			t.Errorf("event %s stored %d times; want once", id, stored[id])
		}
	}
	if len(stored) != len(want) {
		t.Errorf("%d ids stored; want %d", len(stored), len(want))
	}
	perShard, err := s.CountPerShard(t.Context(), f.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(perShard) != 2 || perShard[0] == 0 || perShard[1] == 0 {
		t.Errorf("events per shard %v; want both shards", perShard)
	}
}
