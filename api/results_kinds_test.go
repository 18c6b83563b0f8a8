package api_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/stats"
)

// kindsUser is a synthetic user of the issue-12 test: a personal latency
// level shared by their pre-period and in-experiment calls (what CUPED
// uses), and a cost per call.
type kindsUser struct {
	id, variant string
	pre         float64 // the pre-period call's latency
	latencies   []float64
	costs       []float64
	crossover   bool
}

func kindsUsers(perArm, crossovers int) []kindsUser {
	r := rand.New(rand.NewPCG(12, 12))
	var out []kindsUser
	for arm, variant := range []string{"control", "treatment"} {
		for i := range perArm + crossovers*(1-arm) {
			level := 200 + 40*r.NormFloat64()
			u := kindsUser{id: fmt.Sprintf("k-%s-%d", variant, i), variant: variant, pre: level + 10*r.NormFloat64(), crossover: arm == 0 && i >= perArm}
			for range 1 + r.IntN(5) {
				u.latencies = append(u.latencies, level+15*float64(arm)+10*r.NormFloat64())
				u.costs = append(u.costs, 0.001*(1+r.Float64()))
			}
			out = append(out, u)
		}
	}
	return out
}

// TestResultsNewMetricKindsEndToEnd: quantile, ratio and CUPED metrics with
// a non-inferiority margin, through POST /v1/events, a manual run and GET
// results, with crossover users present; every number equals stats/ on
// the same values computed here.
func TestResultsNewMetricKindsEndToEnd(t *testing.T) {
	env, _ := testenv.NewWithWorker(t, nil)
	org := env.NewOrg(t)
	auth := testenv.Bearer(org.MemberToken)
	shared := false
	cfg := experiments.Config{
		Name: "e2e-kinds", Salt: "kinds-salt", BucketCount: 1000,
		Allocation: []bucketing.Slice{{Variant: "control", Weight: 50}, {Variant: "treatment", Weight: 50}},
		Metrics: []experiments.Metric{
			{Name: "latency_p95_ms", Kind: "quantile", Category: "guardrail", MetricVersion: 1, SharedOrgWide: &shared},
			{Name: "cost_per_call_usd", Kind: "ratio", Category: "guardrail", MetricVersion: 1, SharedOrgWide: &shared},
			{Name: "latency_ms", Kind: "mean", Category: "guardrail", MethodDefault: "welch_t", MetricVersion: 1, SharedOrgWide: &shared,
				NonInferiorityMargin: &experiments.Margin{Value: 40, Type: "absolute", BadDirection: "increase"}},
		},
	}
	exp, history := createWithHistory(t, env, auth, cfg)

	const perArm, crossovers = 150, 4
	users := kindsUsers(perArm, crossovers)
	now := time.Now().UTC()
	var events []map[string]any
	for _, u := range users {
		seq := 0
		ev := func(typ, expID, variant string, at time.Time) map[string]any {
			seq++
			return map[string]any{"event_id": fmt.Sprintf("%s-%d", u.id, seq), "type": typ, "experiment_id": expID,
				"user_id": u.id, "variant": variant, "timestamp": at.Format(time.RFC3339Nano)}
		}
		// Pre-period: a call of another experiment 20 hours earlier (live
		// ingest takes up to a day back; older history comes by import).
		pre := ev("model_call", history.ID, "control", now.Add(-20*time.Hour))
		pre["latency_ms"] = u.pre
		events = append(events, pre, ev("exposure", exp.ID, u.variant, now))
		for i := range u.latencies {
			call := ev("model_call", exp.ID, u.variant, now.Add(time.Duration(i+1)*time.Millisecond))
			call["latency_ms"], call["cost_usd"] = u.latencies[i], u.costs[i]
			events = append(events, call)
		}
		if u.crossover {
			events = append(events, ev("exposure", exp.ID, "treatment", now.Add(time.Second)))
		}
	}
	for start := 0; start < len(events); start += 500 {
		batch := events[start:min(start+500, len(events))]
		resp := env.Do(t, http.MethodPost, "/v1/events", map[string]any{"events": batch}, testenv.APIKey(org.PublishableKey)...)
		var ack struct{ Accepted int }
		resp.JSON(t, &ack)
		if resp.Status != http.StatusAccepted || ack.Accepted != len(batch) {
			t.Fatalf("ingest: %d %s", resp.Status, resp.Body)
		}
	}
	time.Sleep(2100 * time.Millisecond) // the run's instant falls after every event

	runID := startRun(t, env, auth, exp.ID)
	waitForResultsRun(t, env, auth, exp.ID, runID, len(cfg.Metrics))
	var body struct {
		SRM struct {
			Observed map[string]int64 `json:"observed"`
		} `json:"srm"`
		Metrics []resultRow `json:"metrics"`
	}
	resp := env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID+"/results", nil, auth...)
	if resp.Status != http.StatusOK {
		t.Fatalf("results: %d %s", resp.Status, resp.Body)
	}
	resp.JSON(t, &body)
	if body.SRM.Observed["control"] != perArm+crossovers || body.SRM.Observed["treatment"] != perArm {
		t.Errorf("SRM observed %v: crossover users count in their first arm", body.SRM.Observed)
	}

	// The same comparisons from stats/, on values built here without the
	// crossover users.
	var calls [2]stats.Calls
	var ratios [2]stats.RatioArm
	var y, x [2][]float64
	for _, u := range users {
		if u.crossover {
			continue
		}
		a := 0
		if u.variant == "treatment" {
			a = 1
		}
		if len(calls[a].Offsets) == 0 {
			calls[a].Offsets = []int{0}
		}
		var sumLatency, sumCost float64
		for i, l := range u.latencies {
			calls[a].Values = append(calls[a].Values, l)
			sumLatency += l
			sumCost += u.costs[i]
		}
		calls[a].Offsets = append(calls[a].Offsets, len(calls[a].Values))
		ratios[a].Num, ratios[a].Den = append(ratios[a].Num, sumCost), append(ratios[a].Den, float64(len(u.latencies)))
		y[a], x[a] = append(y[a], sumLatency/float64(len(u.latencies))), append(x[a], u.pre)
	}
	want := map[string]stats.Comparison{}
	var err error
	if want["latency_p95_ms"], err = stats.CompareQuantile(calls[0], calls[1], 0.95, stats.Options{}); err != nil {
		t.Fatal(err)
	}
	if want["cost_per_call_usd"], err = stats.CompareRatio(ratios[0], ratios[1], stats.Options{}); err != nil {
		t.Fatal(err)
	}
	if want["latency_ms"], err = stats.CompareCUPED(stats.WelchT, y[0], x[0], y[1], x[1], stats.Options{}); err != nil {
		t.Fatal(err)
	}
	if len(body.Metrics) != 3 {
		t.Fatalf("%d rows, want 3", len(body.Metrics))
	}
	for _, row := range body.Metrics {
		w := want[row.Metric]
		if w.AlwaysValid == nil || !row.Sequential || row.OtherMode == nil {
			t.Fatalf("%s: want a sequential headline with the fixed numbers nested: %+v", row.Metric, row)
		}
		for name, pair := range map[string][2]float64{
			"effect": {row.Effect, w.Effect}, "p_value": {row.PValue, w.AlwaysValid.PValue},
			"ci_low": {row.CILow, w.AlwaysValid.CILow}, "ci_high": {row.CIHigh, w.AlwaysValid.CIHigh},
			"fixed p_value": {row.OtherMode.PValue, w.PValue}, "fixed ci_low": {row.OtherMode.CILow, w.CILow},
		} {
			if math.Abs(pair[0]-pair[1]) > 1e-9*math.Max(1, math.Abs(pair[1])) {
				t.Errorf("%s %s = %v, stats/ gives %v", row.Metric, name, pair[0], pair[1])
			}
		}
		if row.Test != w.Test || row.CrossoverUsers["control"] != crossovers || row.CrossoverUsers["treatment"] != 0 || row.CrossoverHealth != "fail" {
			t.Errorf("%s: test %q (want %q), crossover %v %q", row.Metric, row.Test, w.Test, row.CrossoverUsers, row.CrossoverHealth)
		}
		if len(row.Warnings) == 0 {
			t.Errorf("%s: no crossover warning", row.Metric)
		}
		switch row.Metric {
		case "latency_p95_ms":
			if row.Quantile == nil || *row.Quantile != 0.95 || row.NPerArm["control"] != perArm {
				t.Errorf("quantile row: quantile %v, n %v", row.Quantile, row.NPerArm)
			}
		case "latency_ms":
			if !row.CUPED || row.Theta == nil || math.Abs(*row.Theta-w.CUPED.Theta) > 1e-9 || *row.VarianceReduction < 0.5 {
				t.Errorf("CUPED row: cuped %v theta %v (want %v) reduction %v", row.CUPED, row.Theta, w.CUPED.Theta, row.VarianceReduction)
			}
			ni, _, _ := stats.NonInferiority(w, stats.Margin{Value: 40, BadIsIncrease: true}, true, stats.Options{})
			if row.NonInferiority == nil || row.NonInferiority.Decision != ni.Decision || row.NonInferiority.Decision != stats.NonInferior {
				t.Errorf("non-inferiority %+v, want %+v", row.NonInferiority, ni)
			}
		}
	}
}

// resultstest0 is a minimal experiment config with no metrics.
func resultstest0(name string) experiments.Config {
	return experiments.Config{Name: name, Salt: "history-salt", BucketCount: 1000,
		Allocation: []bucketing.Slice{{Variant: "control", Weight: 100}}, Metrics: []experiments.Metric{}}
}

// TestExperimentConfigRejectsBadIssue12Fields: each bad value is a 400
// problem naming the field, and nothing is created.
func TestExperimentConfigRejectsBadIssue12Fields(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	auth := testenv.Bearer(org.MemberToken)
	shared := false
	q := func(v float64) *float64 { return &v }
	yes := true
	base := func(m experiments.Metric) experiments.Config {
		c := resultstest0("bad-config")
		c.Allocation = []bucketing.Slice{{Variant: "control", Weight: 50}, {Variant: "treatment", Weight: 50}}
		m.MetricVersion, m.SharedOrgWide, m.Category = 1, &shared, "guardrail"
		c.Metrics = []experiments.Metric{m}
		return c
	}
	latency := &experiments.MetricSource{EventType: "model_call", Field: "latency_ms"}
	type badConfig struct {
		name  string
		cfg   experiments.Config
		field string
	}
	cases := []badConfig{
		{"quantile 1.5", base(experiments.Metric{Name: "p", Kind: "quantile", Quantile: q(1.5), Source: latency}), "metrics[0].quantile"},
		{"quantile missing", base(experiments.Metric{Name: "p", Kind: "quantile", Source: latency}), "metrics[0].quantile"},
		{"quantile on a mean", base(experiments.Metric{Name: "p", Kind: "mean", MethodDefault: "welch_t", Quantile: q(0.5), Source: latency}), "metrics[0].quantile"},
		{"ratio without denominator", base(experiments.Metric{Name: "r", Kind: "ratio", Source: latency}), "metrics[0].denominator"},
		{"margin without direction", base(experiments.Metric{Name: "m", Kind: "mean", MethodDefault: "welch_t", Source: latency,
			NonInferiorityMargin: &experiments.Margin{Value: 0.02, Type: "relative"}}), "metrics[0].non_inferiority_margin.bad_direction"},
		{"margin not positive", base(experiments.Metric{Name: "m", Kind: "mean", MethodDefault: "welch_t", Source: latency,
			NonInferiorityMargin: &experiments.Margin{Value: -1, Type: "absolute", BadDirection: "increase"}}), "metrics[0].non_inferiority_margin.value"},
		{"cuped on a rank test", base(experiments.Metric{Name: "c", Kind: "mean", MethodDefault: "mann_whitney", Source: latency, CUPED: &yes}), "metrics[0].cuped"},
	}
	inference := base(experiments.Metric{Name: "x", Kind: "mean", MethodDefault: "welch_t", Source: latency})
	bad := inference
	bad.Inference = "bayesian"
	cases = append(cases, badConfig{"unknown inference", bad, "inference"})
	fixed := inference
	fixed.Inference = "fixed_horizon"
	cases = append(cases, badConfig{"fixed horizon without an end date", fixed, "planned_end_date"})
	tuning := inference
	tuning.SequentialTuning = q(-5)
	cases = append(cases, badConfig{"negative tuning", tuning, "sequential_tuning"})
	for _, c := range cases {
		p := testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/experiments", c.cfg, auth...), http.StatusBadRequest)
		if !p.HasFieldError(c.field) {
			t.Errorf("%s: problem %+v does not name %s", c.name, p, c.field)
		}
	}
	// Valid: fixed horizon with an end date and a tuning.
	ok := inference
	ok.Inference, ok.PlannedEndDate, ok.SequentialTuning = "fixed_horizon", "2030-01-31", q(20000)
	if resp := env.Do(t, http.MethodPost, "/v1/experiments", ok, auth...); resp.Status != http.StatusCreated {
		t.Fatalf("valid config: %d %s", resp.Status, resp.Body)
	}
	var list struct{ Experiments []any }
	env.Do(t, http.MethodGet, "/v1/experiments", nil, auth...).JSON(t, &list)
	if len(list.Experiments) != 1 {
		t.Errorf("%d experiments after the bad posts, want only the valid one", len(list.Experiments))
	}
}

// createWithHistory creates the experiment of cfg and a second one whose
// model calls serve as the first one's pre-period history.
func createWithHistory(t *testing.T, env *testenv.Env, auth []string, cfg experiments.Config) (exp, history struct{ ID string }) {
	t.Helper()
	for _, c := range []struct {
		cfg experiments.Config
		out *struct{ ID string }
	}{{cfg, &exp}, {resultstest0("history"), &history}} {
		resp := env.Do(t, http.MethodPost, "/v1/experiments", c.cfg, auth...)
		if resp.Status != http.StatusCreated {
			t.Fatalf("create experiment: %d %s", resp.Status, resp.Body)
		}
		resp.JSON(t, c.out)
	}
	return exp, history
}
