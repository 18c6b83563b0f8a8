package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/expd/expd/api"
	"github.com/expd/expd/clickhouse/clickhousetest"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results"
	expd "github.com/expd/expd/sdk/go"
	"github.com/expd/expd/vocab"
)

// A 5 % holdout over two running experiments, end to end: users decided
// by POST /v1/assign and by the Go client; no held-out user has an
// exposure of either experiment; the holdout's own exposures split about
// 5/95; a run of the holdout's results (in-process Temporal) counts every
// user on their side and reads the planted effect (exposed users buy
// once more than held-out users) as exposed − holdout, about 1.
func TestHoldoutResultsEndToEnd(t *testing.T) {
	env, _ := testenv.NewWithWorker(t, nil, sdkDeps(t, nil)...)
	holdoutResultsScenario(t, env)
}

// The same with the events on the two-shard ClickHouse cluster: the
// holdout's exposures and the run's reads of every experiment's events
// (Window.AllExperiments) go through the ClickHouse engine.
func TestHoldoutResultsEndToEndOnClickHouse(t *testing.T) {
	acts, deps := onClickHouse(clickhousetest.Store(t, true))
	env, _ := testenv.NewWithWorker(t, acts, sdkDeps(t, []func(*api.Deps){deps})...)
	holdoutResultsScenario(t, env)
}

func holdoutResultsScenario(t *testing.T, env *testenv.Env) {
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	a := create(t, env, org, validConfig("exp-a"))
	b := create(t, env, org, validConfig("exp-b"))
	spec := holdoutSpec("q4", 5)
	spec["metrics"] = []map[string]any{{"name": "purchases", "kind": "count", "category": "primary", "method_default": "welch_t",
		"metric_version": 1, "shared_org_wide": false, "source": map[string]any{"event_type": "business_event", "business_metric": "purchase"}}}
	h := createHoldout(t, env, org, spec)

	// Before the first run: an explicit empty state.
	p := testenv.ExpectProblem(t, env.Do(t, http.MethodGet, "/v1/holdouts/"+h.ID+"/results", nil, admin...), http.StatusNotFound)
	if p.Code != "results_collecting" {
		t.Fatalf("results before a run: %+v", p)
	}

	const viaAssign, viaClient = 600, 600
	var users []string
	for i := range viaAssign {
		u := fmt.Sprintf("assign-%d", i)
		users = append(users, u)
		assignUser(t, env, org.PublishableKey, a.ID, u)
		assignUser(t, env, org.PublishableKey, b.ID, u)
	}
	ctx := context.Background()
	c, err := expd.New(expd.Options{APIKey: org.PublishableKey, BaseURL: env.Server.URL, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range viaClient {
		u := fmt.Sprintf("client-%d", i)
		users = append(users, u)
		c.Assign(ctx, "exp-a", u)
		c.Assign(ctx, "exp-b", u)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	// Read through the engine in use (the database, or ClickHouse).
	var events ingest.EventStore = ingest.SQLEvents{DB: env.DB}
	if env.Deps.Events != nil {
		events = env.Deps.Events
	}
	exposures := func(experimentID string) []ingest.EventRow {
		t.Helper()
		rows, err := events.Read(ctx, ingest.ReadFilter{OrgID: org.ID, ExperimentID: experimentID, Type: vocab.TypeExposure, Limit: 10 * len(users)})
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	side := map[string]string{}
	for _, r := range exposures(h.ID) {
		if s, ok := side[r.UserID]; ok && s != r.Variant {
			t.Fatalf("%s recorded on both sides of the holdout", r.UserID)
		}
		side[r.UserID] = r.Variant
	}
	held := 0
	for _, u := range users {
		switch side[u] {
		case "holdout":
			held++
		case "":
			t.Fatalf("%s has no exposure of the holdout", u)
		}
	}
	if len(side) != len(users) || held < 30 || held > 95 { // 5 % of 1,200 is 60
		t.Fatalf("%d users on the holdout's sides, %d held out; want all %d, about 60 held out", len(side), held, len(users))
	}
	leaked := 0
	for _, id := range []string{a.ID, b.ID} {
		for _, r := range exposures(id) {
			if side[r.UserID] == "holdout" {
				leaked++
			}
		}
	}
	if leaked != 0 {
		t.Fatalf("%d exposures of an in-scope experiment by held-out users", leaked)
	}

	// The planted effect: business events name the experiments, as the
	// apps send them; the holdout reads every experiment's events.
	now := time.Now()
	var evs []map[string]any
	for i, u := range users {
		n := 2 + i%3 // some spread (a constant per arm has no variance to test); the held-out mean of i%3 varies by about 0.1
		if side[u] == "holdout" {
			n--
		}
		for range n {
			ev := businessEvent([]string{a.ID, b.ID}[i%2], u, now)
			ev["business_metric"], ev["variant"] = "purchase", "control"
			evs = append(evs, ev)
		}
	}
	for len(evs) > 0 {
		k := min(len(evs), 500)
		accepted(t, postEvents(t, env, org.SecretKey, evs[:k]...))
		evs = evs[k:]
	}

	var started struct {
		RunID      string `json:"run_id"`
		WorkflowID string `json:"workflow_id"`
	}
	env.Do(t, http.MethodPost, "/v1/holdouts/"+h.ID+"/runs", nil, admin...).ExpectJSON(t, http.StatusAccepted, &started)
	if want := "results/holdout-" + h.ID + "/" + started.RunID; started.WorkflowID != want {
		t.Fatalf("workflow %q, want %q", started.WorkflowID, want)
	}
	var body struct {
		HoldoutID   string  `json:"holdout_id"`
		Percent     float64 `json:"percent"`
		ComputedFor string  `json:"computed_for"`
		Experiments []struct {
			ID string `json:"id"`
		} `json:"experiments"`
		Metrics []struct {
			Metric         string           `json:"metric"`
			Variant        string           `json:"variant"`
			ControlVariant string           `json:"control_variant"`
			Effect         float64          `json:"effect"`
			NPerArm        map[string]int64 `json:"n_per_arm"`
		} `json:"metrics"`
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp := env.Do(t, http.MethodGet, "/v1/holdouts/"+h.ID+"/results", nil, admin...)
		if resp.Status == http.StatusOK {
			resp.JSON(t, &body)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no holdout results: %d %s", resp.Status, resp.Body)
		}
		time.Sleep(300 * time.Millisecond)
	}
	run, err := results.LoadRun(ctx, env.DB, org.ID, h.ID, body.ComputedFor)
	if err != nil || run.Status != results.StatusCompleted || body.ComputedFor != started.RunID {
		t.Fatalf("run %s: %+v, %v", body.ComputedFor, run, err)
	}
	if body.HoldoutID != h.ID || body.Percent != 5 || len(body.Experiments) != 2 || len(body.Metrics) != 1 {
		t.Fatalf("holdout results: %+v", body)
	}
	m := body.Metrics[0]
	if m.Metric != "purchases" || m.ControlVariant != "holdout" || m.Variant != "exposed" ||
		m.NPerArm["holdout"] != int64(held) || m.NPerArm["exposed"] != int64(len(users)-held) || !(m.Effect > 0.5 && m.Effect < 1.5) {
		t.Fatalf("holdout row %+v; want %d held out, %d exposed, effect 1 purchase", m, held, len(users)-held)
	}
}

// Bad input on the holdout results routes: another org's holdout and a
// malformed id are 404 problems; a member who is not admin is refused.
func TestHoldoutResultsBadInput(t *testing.T) {
	env := testenv.New(t)
	org, other := env.NewOrg(t), env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	theirs := createHoldout(t, env, other, holdoutSpec("theirs", 5))
	for _, id := range []string{theirs.ID, "not-a-uuid", "00000000-0000-4000-8000-000000000000"} {
		for _, r := range []struct{ method, path string }{{http.MethodGet, "/results"}, {http.MethodPost, "/runs"}} {
			p := testenv.ExpectProblem(t, env.Do(t, r.method, "/v1/holdouts/"+id+r.path, nil, admin...), http.StatusNotFound)
			if p.Code != "holdout_not_found" {
				t.Fatalf("%s %s of %s: %+v", r.method, r.path, id, p)
			}
		}
	}
	var n int64
	env.DB.Table("result_runs").Count(&n)
	if n != 0 {
		t.Fatalf("%d runs recorded by refused requests", n)
	}
}
