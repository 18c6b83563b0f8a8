package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/expd/expd/api"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/vocab"
	"github.com/expd/expd/workflows"
)

// runStatus is the part of GET .../runs/{run_id} the coverage test reads.
type runStatus struct {
	Status    string            `json:"status"`
	Rows      *int              `json:"rows"`
	Counted   *results.Tally    `json:"counted"`
	LeftOut   []results.LeftOut `json:"left_out"`
	NoResults string            `json:"no_results"`
}

// coverageEvents are the events of the coverage test: two counted users
// (one per arm) and one user or event for each reason a run leaves data
// out. start is the experiment's (backdated) start, now the test's clock.
func coverageEvents(orgID, expID string, start, now time.Time) []ingest.EventRow {
	in := start.Add(10 * time.Minute) // inside every run's window
	latency := 100.0
	var out []ingest.EventRow
	add := func(typ, user, variant string, ts time.Time) {
		e := ingest.EventRow{OrgID: orgID, EventID: fmt.Sprintf("cov-%s-%d", expID, len(out)), Type: vocab.RecordType(typ), ExperimentID: expID,
			UserID: user, Variant: variant, Ts: ts.UTC(), ReceivedAt: now.UTC(), Source: "api"}
		if typ == "model_call" {
			e.LatencyMs = &latency
		}
		out = append(out, e)
	}
	for _, u := range []struct{ user, variant string }{{"c1", "control"}, {"t1", "treatment"}} {
		add("exposure", u.user, u.variant, in)
		add("model_call", u.user, u.variant, in.Add(time.Second))
	}
	add("exposure", "early", "control", start.Add(-time.Hour)) // before_start: its user has no exposure in the window
	add("model_call", "early", "control", start.Add(-time.Hour+time.Second))
	add("model_call", "c1", "control", now.Add(48*time.Hour)) // after_end of every run
	add("model_call", "never", "control", in)                 // unexposed
	add("exposure", "ghost", "retired-arm", in)               // unattributed
	add("model_call", "ghost", "retired-arm", in.Add(time.Second))
	add("exposure", "both", "control", in) // crossover
	add("exposure", "both", "treatment", in.Add(time.Second))
	add("model_call", "both", "treatment", in.Add(2*time.Second))
	return out
}

// Every run says what it counted and what it left out, and why, on its
// status; a completed run without rows says why there and in the results
// route's 404. Manual runs through the route, a nightly day, a design
// without metrics and a run whose window ends before the experiment
// existed.
func TestRunStatusCountsWhatItCountedAndLeftOut(t *testing.T) {
	env, tenv := testenv.NewWithWorker(t, nil)
	org := env.NewOrg(t)
	auth := testenv.Bearer(org.MemberToken)

	every := map[string]results.Tally{
		results.LeftBeforeStart:  {Users: 1, Exposures: 1, Events: 1},
		results.LeftAfterEnd:     {Users: 1, Exposures: 0, Events: 1},
		results.LeftUnexposed:    {Users: 1, Exposures: 0, Events: 1},
		results.LeftUnattributed: {Users: 1, Exposures: 1, Events: 1},
		results.LeftCrossover:    {Users: 1, Exposures: 2, Events: 1},
	}
	noMetrics := resultstest.Config("")
	noMetrics.Metrics = []experiments.Metric{}
	// With a quantile metric the run reads the events one by one for its
	// calls and counts the coverage in that same pass (results.readEvents).
	withP95 := resultstest.Config("")
	shared := false
	withP95.Metrics = append(withP95.Metrics, experiments.Metric{Name: "latency_p95_ms", Kind: "quantile", Category: "guardrail", MetricVersion: 1, SharedOrgWide: &shared})
	for _, c := range []struct {
		name     string
		cfg      experiments.Config
		key      func(start time.Time) string // "" : a manual run through POST .../runs
		rows     int
		counted  results.Tally
		leftOut  map[string]results.Tally
		noResult string // in no_results and in the results 404's detail; "" when rows > 0
	}{
		{name: "manual run", cfg: resultstest.Config(""), rows: len(resultstest.Metrics),
			counted: results.Tally{Users: 2, Exposures: 2, Events: 2}, leftOut: every},
		{name: "nightly day", cfg: resultstest.Config(""), key: func(time.Time) string { return results.NightlyKey(time.Now()).ComputedFor },
			rows: len(resultstest.Metrics), counted: results.Tally{Users: 2, Exposures: 2, Events: 2}, leftOut: every},
		{name: "manual run with a p95", cfg: withP95, rows: len(resultstest.Metrics) + 1,
			counted: results.Tally{Users: 2, Exposures: 2, Events: 2}, leftOut: every},
		{name: "no metrics", cfg: noMetrics, rows: 0, counted: results.Tally{Users: 2, Exposures: 2, Events: 2}, leftOut: every,
			noResult: "has no metrics"},
		{name: "window ends before the experiment existed", cfg: resultstest.Config(""),
			key:      func(start time.Time) string { return results.ManualKey(start.Add(-time.Minute)).ComputedFor },
			noResult: results.SkipNotCreated},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Name = strings.ReplaceAll("coverage-"+c.name, " ", "-")
			exp := resultstest.Experiment(t, env.DB, org.ID, cfg)
			resultstest.Backdate(t, env.DB, exp.ID, time.Hour)
			start := exp.CreatedAt.Add(-time.Hour)
			resultstest.Insert(t, env.DB, coverageEvents(org.ID, exp.ID, start, time.Now()))

			var runID string
			if c.key == nil {
				runID = startRun(t, env, auth, exp.ID)
			} else {
				runID = c.key(start)
				ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
				defer cancel()
				run, err := tenv.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.ResultsWorkflowID(exp.ID, runID), TaskQueue: tenv.TaskQueue},
					workflows.ExperimentResults, workflows.ExperimentResultsInput{OrgID: org.ID, ExperimentID: exp.ID, ComputedFor: runID})
				if err != nil {
					t.Fatal(err)
				}
				if err := run.Get(ctx, nil); err != nil {
					t.Fatal(err)
				}
			}
			st := waitForRunStatus(t, env, auth, exp.ID, runID)
			if st.Status != results.StatusCompleted || st.Rows == nil || *st.Rows != c.rows {
				t.Fatalf("status %q rows %v, want completed with %d", st.Status, st.Rows, c.rows)
			}
			if c.leftOut == nil { // nothing analysed: nothing counted
				if st.Counted != nil || st.LeftOut != nil {
					t.Errorf("counted %+v left out %+v, want neither", st.Counted, st.LeftOut)
				}
			} else {
				if st.Counted == nil || *st.Counted != c.counted {
					t.Errorf("counted %+v, want %+v", st.Counted, c.counted)
				}
				if len(st.LeftOut) != len(c.leftOut) {
					t.Errorf("left out %+v, want every reason of %+v", st.LeftOut, c.leftOut)
				}
				for _, l := range st.LeftOut {
					if l.Tally != c.leftOut[l.Reason] || l.Detail == "" {
						t.Errorf("left out %s: %+v, want %+v with a detail", l.Reason, l, c.leftOut[l.Reason])
					}
				}
			}
			if !strings.Contains(st.NoResults, c.noResult) || (c.noResult == "") != (st.NoResults == "") {
				t.Errorf("no_results %q, want %q", st.NoResults, c.noResult)
			}

			resp := env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID+"/results", nil, auth...)
			if c.rows > 0 {
				if resp.Status != http.StatusOK {
					t.Fatalf("results: %d %s", resp.Status, resp.Body)
				}
				return
			}
			p := testenv.ExpectProblem(t, resp, http.StatusNotFound)
			if p.Code != api.CodeResultsCollecting || !strings.Contains(p.Detail, runID+" completed with no result rows") || !strings.Contains(p.Detail, c.noResult) {
				t.Errorf("404 detail %q, want the run %s and %q", p.Detail, runID, c.noResult)
			}
			if c.leftOut != nil && !strings.Contains(p.Detail, "counted 2 users") {
				t.Errorf("404 detail %q does not say what was counted", p.Detail)
			}
		})
	}
}

// waitForRunStatus polls a run's status through the route until it has
// ended (a failed run fails the test).
func waitForRunStatus(t *testing.T, env *testenv.Env, auth []string, expID, runID string) runStatus {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp := env.Do(t, http.MethodGet, "/v1/experiments/"+expID+"/runs/"+runID, nil, auth...)
		var st runStatus
		resp.JSON(t, &st)
		switch {
		case resp.Status != http.StatusOK || st.Status == results.StatusFailed:
			t.Fatalf("run %s: %d %s", runID, resp.Status, resp.Body)
		case st.Status == results.StatusCompleted:
			return st
		case time.Now().After(deadline):
			t.Fatalf("run %s still %q", runID, st.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
