package api_test

import (
	"context"
	"math"
	"net/http"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/workflows"
)

// resultsBody is the part of GET .../results the tests read.
type resultsBody struct {
	ComputedFor   string      `json:"computed_for"`
	Kind          string      `json:"kind"`
	AvailableDays []string    `json:"available_days"`
	SRMGate       string      `json:"srm_gate"`
	Metrics       []resultRow `json:"metrics"`
}

// resultRow is the part of one results row the tests read.
type resultRow struct {
	Metric           string           `json:"metric"`
	Variant          string           `json:"variant"`
	Test             string           `json:"test"`
	Statistic        float64          `json:"statistic"`
	PValue           float64          `json:"p_value"`
	PValueFDR        float64          `json:"p_value_fdr"`
	Effect           float64          `json:"effect"`
	CILow            float64          `json:"ci_low"`
	CIHigh           float64          `json:"ci_high"`
	NPerArm          map[string]int64 `json:"n_per_arm"`
	SRMP             *float64         `json:"srm_p"`
	PermutationsUsed *int             `json:"permutations_used"`
	SampleCapUsed    *bool            `json:"sample_cap_used"`
	WindowDays       int              `json:"window_days"`
	Preliminary      bool             `json:"preliminary"`
	RelativeLift     *struct {
		Value float64 `json:"value"`
	} `json:"relative_lift"`
	Distribution struct {
		Arms map[string]struct {
			N int `json:"n"`
		} `json:"arms"`
	} `json:"distribution"`
	Sequential bool   `json:"sequential"`
	Inference  string `json:"inference"`
	OtherMode  *struct {
		Mode   string  `json:"mode"`
		PValue float64 `json:"p_value"`
		CILow  float64 `json:"ci_low"`
		CIHigh float64 `json:"ci_high"`
	} `json:"other_mode"`
	CUPED             bool             `json:"cuped"`
	Theta             *float64         `json:"theta"`
	VarianceReduction *float64         `json:"variance_reduction"`
	Quantile          *float64         `json:"quantile"`
	CrossoverUsers    map[string]int64 `json:"crossover_users"`
	CrossoverHealth   string           `json:"crossover_health"`
	Warnings          []string         `json:"warnings"`
	NonInferiority    *struct {
		PValue   float64 `json:"p_value"`
		Decision string  `json:"decision"`
	} `json:"non_inferiority"`
}

func TestResultsEndToEndThroughIngestAManualRunAndTheResultsRoute(t *testing.T) {
	env, tenv := testenv.NewWithWorker(t, nil)
	org := env.NewOrg(t)
	auth := testenv.Bearer(org.MemberToken)

	var exp struct{ ID string }
	env.Do(t, http.MethodPost, "/v1/experiments", resultstest.Config("e2e-results"), auth...).ExpectJSON(t, http.StatusCreated, &exp)
	resultsPath := "/v1/experiments/" + exp.ID + "/results"

	// Collecting until a run produces rows.
	resp := env.Do(t, http.MethodGet, resultsPath, nil, auth...)
	testenv.ExpectProblem(t, resp, http.StatusNotFound)
	var hinted struct{ Hint string }
	resp.JSON(t, &hinted)
	if hinted.Hint != "collecting" {
		t.Fatalf("404 hint %q, want collecting", hinted.Hint)
	}

	users := resultstest.Users(300, 3)
	resultstest.Post(t, env, org.PublishableKey, resultstest.Events(org.ID, exp.ID, users, time.Now().UTC()))
	time.Sleep(1100 * time.Millisecond) // the run's instant (whole seconds) falls after every event

	resp = env.Do(t, http.MethodPost, "/v1/experiments/"+exp.ID+"/runs", nil, auth...)
	if resp.Status != http.StatusAccepted {
		t.Fatalf("start run: %d %s", resp.Status, resp.Body)
	}
	var started struct {
		RunID      string `json:"run_id"`
		WorkflowID string `json:"workflow_id"`
	}
	resp.JSON(t, &started)
	if _, err := results.ParseKey(started.RunID); err != nil || started.WorkflowID != workflows.ResultsWorkflowID(exp.ID, started.RunID) {
		t.Fatalf("started %+v (%v)", started, err)
	}
	waitForResultsRun(t, env, auth, exp.ID, started.RunID, len(resultstest.Metrics))

	var body resultsBody
	resp = env.Do(t, http.MethodGet, resultsPath, nil, auth...)
	if resp.Status != http.StatusOK {
		t.Fatalf("results: %d %s", resp.Status, resp.Body)
	}
	resp.JSON(t, &body)
	if body.ComputedFor != started.RunID || len(body.AvailableDays) != 1 || body.AvailableDays[0] != started.RunID || body.Kind != results.KindManual {
		t.Fatalf("computed_for %q kind %q available %v", body.ComputedFor, body.Kind, body.AvailableDays)
	}
	checkResultsAgainstStats(t, body, users)

	// A nightly run of today joins available_days, newest first (its
	// window ends at midnight, after the manual instant).
	today := results.NightlyKey(time.Now()).ComputedFor
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run, err := tenv.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.ResultsWorkflowID(exp.ID, today), TaskQueue: tenv.TaskQueue},
		workflows.ExperimentResults, workflows.ExperimentResultsInput{OrgID: org.ID, ExperimentID: exp.ID, ComputedFor: today})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ query, want, kind string }{
		{"", today, results.KindNightly},
		{"?day=" + today, today, results.KindNightly},
		{"?day=" + started.RunID, started.RunID, results.KindManual},
	} {
		resp = env.Do(t, http.MethodGet, resultsPath+c.query, nil, auth...)
		var got resultsBody
		resp.JSON(t, &got)
		if resp.Status != http.StatusOK || got.ComputedFor != c.want || got.Kind != c.kind || len(got.AvailableDays) != 2 || got.AvailableDays[0] != today {
			t.Fatalf("GET results%s: %d computed_for %q kind %q available %v", c.query, resp.Status, got.ComputedFor, got.Kind, got.AvailableDays)
		}
		checkResultsAgainstStats(t, got, users)
	}
	for _, bad := range []string{"yesterday", "2025-13-01", "manual-now", "manual-2025-01-01"} {
		p := testenv.ExpectProblem(t, env.Do(t, http.MethodGet, resultsPath+"?day="+bad, nil, auth...), http.StatusBadRequest)
		if !p.HasFieldError("day") {
			t.Errorf("day=%s: %+v, want a field error on day", bad, p)
		}
	}
	for _, unknown := range []string{"2020-01-01", "manual-2020-01-01T00:00:00Z"} {
		testenv.ExpectProblem(t, env.Do(t, http.MethodGet, resultsPath+"?day="+unknown, nil, auth...), http.StatusNotFound)
		testenv.ExpectProblem(t, env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID+"/runs/"+unknown, nil, auth...), http.StatusNotFound)
	}
	testenv.ExpectProblem(t, env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID+"/runs/bogus", nil, auth...), http.StatusBadRequest)
	// Another org sees none of it.
	other := env.NewOrg(t)
	testenv.ExpectProblem(t, env.Do(t, http.MethodGet, resultsPath, nil, testenv.Bearer(other.MemberToken)...), http.StatusNotFound)
	testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/experiments/"+exp.ID+"/runs", nil, testenv.Bearer(other.MemberToken)...), http.StatusNotFound)
}

func waitForResultsRun(t *testing.T, env *testenv.Env, auth []string, expID, runID string, rows int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp := env.Do(t, http.MethodGet, "/v1/experiments/"+expID+"/runs/"+runID, nil, auth...)
		var st struct {
			Status string
			Rows   *int
		}
		resp.JSON(t, &st)
		switch {
		case resp.Status != http.StatusOK || st.Status == results.StatusFailed:
			t.Fatalf("run %s: %d %s", runID, resp.Status, resp.Body)
		case st.Status == results.StatusCompleted:
			if st.Rows == nil || *st.Rows != rows {
				t.Fatalf("completed run reports rows %v, want %d", st.Rows, rows)
			}
			return
		case time.Now().After(deadline):
			t.Fatalf("run %s still %q", runID, st.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkResultsAgainstStats recomputes every comparison with stats/ on per-user
// values computed in Go from the synthetic users, and checks that the CIs
// cover the true effects.
func checkResultsAgainstStats(t *testing.T, body resultsBody, users []resultstest.User) {
	t.Helper()
	if body.SRMGate != stats.GatePass || len(body.Metrics) != len(resultstest.Metrics) {
		t.Fatalf("srm %q, %d metrics", body.SRMGate, len(body.Metrics))
	}
	truth := map[string]float64{"latency_ms": resultstest.LatencyEffectMs, "conversion": resultstest.TreatmentConversion - resultstest.ControlConversion}
	var pvalues []float64
	for _, m := range body.Metrics {
		pvalues = append(pvalues, m.PValue)
	}
	fdr := stats.BenjaminiHochberg(pvalues)
	for i, m := range body.Metrics {
		values := resultstest.Values(users, m.Metric)
		method, err := stats.ParseMethod(m.Test)
		if err != nil {
			t.Fatal(err)
		}
		want, err := stats.Compare(method, values["control"], values["treatment"], stats.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// Inference defaults to sequential: the headline is always-valid and
		// the fixed-horizon numbers are nested. No user has pre-period
		// events, so CUPED has nothing to adjust.
		if !m.Sequential || m.Inference != "sequential" || want.AlwaysValid == nil || m.OtherMode == nil || m.OtherMode.Mode != "fixed_horizon" || m.CUPED {
			t.Fatalf("%s: sequential %v, inference %q, other mode %+v, cuped %v", m.Metric, m.Sequential, m.Inference, m.OtherMode, m.CUPED)
		}
		if m.CrossoverUsers["control"] != 0 || m.CrossoverHealth != "pass" {
			t.Errorf("%s: crossover %v %q", m.Metric, m.CrossoverUsers, m.CrossoverHealth)
		}
		for name, pair := range map[string][2]float64{
			"statistic": {m.Statistic, want.Statistic}, "p_value": {m.PValue, want.AlwaysValid.PValue}, "effect": {m.Effect, want.Effect},
			"ci_low": {m.CILow, want.AlwaysValid.CILow}, "ci_high": {m.CIHigh, want.AlwaysValid.CIHigh}, "p_value_fdr": {m.PValueFDR, fdr[i]},
			"fixed p_value": {m.OtherMode.PValue, want.PValue}, "fixed ci_low": {m.OtherMode.CILow, want.CILow}, "fixed ci_high": {m.OtherMode.CIHigh, want.CIHigh},
		} {
			if math.Abs(pair[0]-pair[1]) > 1e-9*math.Max(1, math.Abs(pair[1])) {
				t.Errorf("%s %s = %v, stats/ on the same values gives %v", m.Metric, name, pair[0], pair[1])
			}
		}
		if m.NPerArm["control"] != 300 || m.NPerArm["treatment"] != 300 || m.Distribution.Arms["treatment"].N != 300 {
			t.Errorf("%s: n_per_arm %v", m.Metric, m.NPerArm)
		}
		if m.SRMP == nil || m.PermutationsUsed == nil || m.SampleCapUsed == nil || *m.SampleCapUsed || m.WindowDays != 1 || !m.Preliminary || m.RelativeLift == nil {
			t.Errorf("%s: limits and flags %+v", m.Metric, m)
		}
		if effect, ok := truth[m.Metric]; ok && (m.CILow > effect || m.CIHigh < effect) {
			t.Errorf("%s: CI [%v, %v] misses the true effect %v", m.Metric, m.CILow, m.CIHigh, effect)
		}
	}
}
