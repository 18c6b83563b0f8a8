package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/api"
	"github.com/expd/expd/internal/temporaltest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results"
	"github.com/expd/expd/results/resultstest"
	expdworker "github.com/expd/expd/worker"
	"github.com/expd/expd/workflows"
)

// A nightly day on demand: an admin computes yesterday under the
// schedule's workflow id, a second start while it runs is refused, a
// recompute after it ended is accepted, and ?day= serves it. Then an
// org-wide backfill of a range.
func TestDayRunOnDemandAndBackfill(t *testing.T) {
	tenv := temporaltest.Start(t)
	env := testenv.New(t, func(d *api.Deps) { d.Temporal, d.TaskQueue = tenv.Client, tenv.TaskQueue })
	org := env.NewOrg(t)
	admin, member := testenv.Bearer(org.AdminToken), testenv.Bearer(org.MemberToken)
	exp := resultstest.Experiment(t, env.DB, org.ID, resultstest.Config("nightly-on-demand"))
	// Started a minute into yesterday: yesterday's window is one day.
	yesterday := results.NightlyKey(time.Now().AddDate(0, 0, -1))
	resultstest.Backdate(t, env.DB, exp.ID, time.Since(yesterday.WindowEnd.Add(-24*time.Hour+time.Minute)))
	users := resultstest.Users(300, 5)
	resultstest.Insert(t, env.DB, resultstest.Events(org.ID, exp.ID, users, yesterday.WindowEnd.Add(-12*time.Hour)))
	runs := "/v1/experiments/" + exp.ID + "/runs"
	day := map[string]any{"day": yesterday.ComputedFor}

	// Bad requests first: nothing is started by them.
	testenv.ExpectProblem(t, env.Do(t, http.MethodPost, runs, day, member...), http.StatusForbidden)
	for name, body := range map[string]any{
		"today":       map[string]any{"day": results.NightlyKey(time.Now()).ComputedFor},
		"future":      map[string]any{"day": "2999-01-01"},
		"not a date":  map[string]any{"day": "yesterday"},
		"bad month":   map[string]any{"day": "2025-13-01"},
		"manual id":   map[string]any{"day": "manual-2025-01-01T00:00:00Z"},
		"wrong type":  map[string]any{"day": 20250101},
		"null":        `{"day": null, "x": `,
		"trailing":    `{"day": "2025-01-01"} {}`,
		"NUL":         map[string]any{"day": "2025-01-01\x00"},
		"huge number": `{"day": 1e999}`,
	} {
		r := env.Do(t, http.MethodPost, runs, body, admin...)
		if r.Status != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", name, r.Status, r.Body)
		}
	}

	// No worker yet: the first start stays running, so the duplicate is
	// refused deterministically.
	r := env.Do(t, http.MethodPost, runs, day, admin...)
	if r.Status != http.StatusAccepted {
		t.Fatalf("day run: %d %s", r.Status, r.Body)
	}
	var started struct {
		RunID      string `json:"run_id"`
		WorkflowID string `json:"workflow_id"`
		Kind       string `json:"kind"`
	}
	r.JSON(t, &started)
	if started.RunID != yesterday.ComputedFor || started.Kind != results.KindNightly || started.WorkflowID != workflows.ResultsWorkflowID(exp.ID, yesterday.ComputedFor) {
		t.Fatalf("started %+v", started)
	}
	p := testenv.ExpectProblem(t, env.Do(t, http.MethodPost, runs, day, admin...), http.StatusConflict)
	if p.Code != "run_in_progress" {
		t.Fatalf("duplicate: %+v", p)
	}

	tenv.NewWorker(func(r worker.Registry) { expdworker.Register(r, &activities.Activities{DB: env.DB}) })
	waitForResultsRun(t, env, admin, exp.ID, yesterday.ComputedFor, len(resultstest.Metrics))
	var body resultsBody
	r = env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID+"/results?day="+yesterday.ComputedFor, nil, member...)
	r.JSON(t, &body)
	if r.Status != http.StatusOK || body.ComputedFor != yesterday.ComputedFor || body.Kind != results.KindNightly {
		t.Fatalf("results of the day: %d %s", r.Status, r.Body)
	}
	checkResultsAgainstStats(t, body, users)

	// Recomputing a finished day is allowed.
	if r := env.Do(t, http.MethodPost, runs, day, admin...); r.Status != http.StatusAccepted {
		t.Fatalf("recompute: %d %s", r.Status, r.Body)
	}
	waitForResultsRun(t, env, admin, exp.ID, yesterday.ComputedFor, len(resultstest.Metrics))

	// Backfill: three days ending yesterday; yesterday is already done.
	first := results.NightlyKey(time.Now().AddDate(0, 0, -3)).ComputedFor
	rng := map[string]any{"from": first, "to": yesterday.ComputedFor}
	testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/runs/backfill", rng, member...), http.StatusForbidden)
	for name, body := range map[string]any{
		"reversed":  map[string]any{"from": yesterday.ComputedFor, "to": first},
		"too long":  map[string]any{"from": "2020-01-01", "to": yesterday.ComputedFor},
		"today":     map[string]any{"from": first, "to": results.NightlyKey(time.Now()).ComputedFor},
		"missing":   map[string]any{"from": first},
		"malformed": `{"from":`,
	} {
		if r := env.Do(t, http.MethodPost, "/v1/runs/backfill", body, admin...); r.Status != http.StatusBadRequest {
			t.Errorf("backfill %s: %d %s", name, r.Status, r.Body)
		}
	}
	r = env.Do(t, http.MethodPost, "/v1/runs/backfill", rng, admin...)
	if r.Status != http.StatusAccepted {
		t.Fatalf("backfill: %d %s", r.Status, r.Body)
	}
	var bf struct {
		WorkflowID string `json:"workflow_id"`
	}
	r.JSON(t, &bf)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var totals workflows.DailyResultsResult
	if err := tenv.Client.GetWorkflow(ctx, bf.WorkflowID, "").Get(ctx, &totals); err != nil {
		t.Fatal(err)
	}
	if totals.Days != 3 || totals.AlreadyDone != 1 || totals.Completed+totals.Skipped != 2 || totals.Failed != 0 {
		t.Fatalf("backfill totals %+v", totals)
	}
	var dayBody resultsBody
	env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID+"/results", nil, member...).JSON(t, &dayBody)
	if len(dayBody.AvailableDays) == 0 || dayBody.AvailableDays[0] != yesterday.ComputedFor {
		t.Fatalf("available days after backfill: %v", dayBody.AvailableDays)
	}
}
