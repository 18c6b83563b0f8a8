package results

import (
	"fmt"
	"math"
	"testing"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/stats"
)

func TestIsPreliminary(t *testing.T) {
	cases := []struct {
		days       int
		nc, nt     int64
		gate       string
		preliminar bool
	}{
		{7, 100, 100, stats.GatePass, false},
		{6, 100, 100, stats.GatePass, true},
		{30, 99, 5000, stats.GatePass, true},
		{30, 5000, 99, stats.GatePass, true},
		{30, 5000, 5000, stats.GateFail, true},
		{30, 5000, 5000, stats.GateInsufficient, true},
	}
	for _, c := range cases {
		if got := IsPreliminary(c.days, c.nc, c.nt, c.gate); got != c.preliminar {
			t.Errorf("IsPreliminary(%d, %d, %d, %s) = %v", c.days, c.nc, c.nt, c.gate, got)
		}
	}
}

// design of a two-arm experiment with one metric of the given method.
func design(method string, limits plans.Limit) Design {
	shared := false
	m := metrics.Resolved{Metric: experiments.Metric{Name: "m", Kind: "mean", Category: "primary", MethodDefault: method, MetricVersion: 1,
		SharedOrgWide: &shared, Source: &experiments.MetricSource{EventType: "model_call", Field: "latency_ms"}}}
	return Design{OrgID: "o", ExperimentID: "e", Control: "a", Limits: limits,
		Allocation: []bucketing.Slice{{Variant: "a", Weight: 1}, {Variant: "b", Weight: 1}},
		Metrics:    []metrics.Resolved{m}, Window: Window{Days: 10}}
}

// sample has n users per arm; b's values are shifted by shift.
func sample(n int, shift float64) Sample {
	s := Sample{Arms: map[string]*Arm{}}
	for ai, name := range []string{"a", "b"} {
		arm := &Arm{Values: [][]float64{nil}}
		for i := range n {
			arm.UserIDs = append(arm.UserIDs, fmt.Sprintf("%s-%d", name, i))
			arm.Values[0] = append(arm.Values[0], float64(i%17)+shift*float64(ai))
		}
		s.Arms[name] = arm
	}
	return s
}

func TestAnalyzeAppliesThePlansSampleCapAndPermutationBudget(t *testing.T) {
	limits := plans.Get(plans.Free)
	limits.MaxSamplePerArm = 150
	a, err := Analyze(design("permutation", limits), sample(200, 1), testNow, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := a.Rows[0]
	if !r.SampleCapUsed || r.NControl != 150 || r.NTreatment != 150 {
		t.Errorf("cap: used %v, n %d/%d, want true 150/150", r.SampleCapUsed, r.NControl, r.NTreatment)
	}
	if r.PermutationsUsed != limits.MaxPermutations {
		t.Errorf("permutations used %d, want the plan's %d", r.PermutationsUsed, limits.MaxPermutations)
	}
	if a.SRM.Observed["a"] != 200 || a.SRM.Gate != stats.GatePass {
		t.Errorf("SRM counts exposed users before the cap: %+v", a.SRM)
	}
	again, err := Analyze(design("permutation", limits), sample(200, 1), testNow, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Rows[0].PValue != r.PValue || again.Rows[0].CILow != r.CILow {
		t.Errorf("a rerun gave p %v ci %v, first %v %v: resampling must be seeded", again.Rows[0].PValue, again.Rows[0].CILow, r.PValue, r.CILow)
	}
}

func TestAnalyzeMatchesStatsOnTheSameValues(t *testing.T) {
	s := sample(120, 2)
	a, err := Analyze(design("welch_t", plans.Get(plans.Pro)), s, testNow, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := stats.Compare(stats.WelchT, s.Arms["a"].Values[0], s.Arms["b"].Values[0], stats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := a.Rows[0]
	if r.Effect != want.Effect || r.PValue != want.PValue || r.CIHigh != want.CIHigh || r.Statistic != want.Statistic || r.SampleCapUsed {
		t.Errorf("row %+v, want %+v", r, want)
	}
	if r.Preliminary {
		t.Errorf("10-day window, 120 per arm, SRM pass: not preliminary")
	}
}

func TestAnalyzeKeepsUnresolvedMetricsAsUndefinedRows(t *testing.T) {
	d := design("welch_t", plans.Get(plans.Pro))
	d.Metrics[0].Problem = "metric \"m\" has no source"
	s := sample(10, 0)
	s.Arms["a"].Values, s.Arms["b"].Values = [][]float64{nil}, [][]float64{nil}
	a, err := Analyze(d, s, testNow, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Rows) != 1 || a.Rows[0].Undefined != d.Metrics[0].Problem || a.Rows[0].PValue != 0 {
		t.Fatalf("rows %+v", a.Rows)
	}
}

func TestApplyFDRLeavesUndefinedRowsOut(t *testing.T) {
	rows := []Row{{PValue: 0.01}, {PValue: 0.5, Undefined: "n < 2"}, {PValue: 0.04}, {PValue: 0.03}}
	ApplyFDR(rows)
	want := stats.BenjaminiHochberg([]float64{0.01, math.NaN(), 0.04, 0.03})
	for i, r := range rows {
		if i == 1 {
			if r.PValueFDR != 0 {
				t.Errorf("undefined row got fdr %v", r.PValueFDR)
			}
			continue
		}
		if r.PValueFDR != want[i] {
			t.Errorf("row %d fdr %v, want %v", i, r.PValueFDR, want[i])
		}
	}
	if rows[0].PValueFDR != 0.03 { // 3 comparisons: 0.01 * 3 / 1
		t.Errorf("fdr of smallest p = %v, want 0.03 with a family of 3", rows[0].PValueFDR)
	}
}
