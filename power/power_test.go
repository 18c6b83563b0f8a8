package power

import (
	"math"
	"testing"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/results"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/vocab"
)

// Compute on a sample built by hand: a ratio metric is planned on the
// delta method's linearised values, a parked arm (weight 0) gets a
// problem rather than a 50/50 plan and takes no share of the traffic (12
// users over 2 days, all to a and b), and the numbers are stats'.
func TestComputeRatioAndParkedArm(t *testing.T) {
	ratio := metrics.Resolved{Metric: experiments.Metric{Name: "cost_per_call", Kind: vocab.Ratio, Category: "primary"}}
	arm := func(num, den []float64) *results.Arm {
		return &results.Arm{UserIDs: make([]string, len(num)), Values: [][]float64{num}, Den: [][]float64{den}}
	}
	num, den := []float64{2, 4, 3, 5, 1, 6}, []float64{1, 2, 2, 2, 1, 3}
	d := Data{Source: SourceExperiment, Metrics: []metrics.Resolved{ratio}, Control: "a",
		Arms:   []bucketing.Slice{{Variant: "a", Weight: 1}, {Variant: "b", Weight: 1}, {Variant: "parked", Weight: 0}},
		Sample: results.Sample{Arms: map[string]*results.Arm{"a": arm(num, den), "b": arm(num, den)}},
		Days:   2, Users: 12, NStar: stats.DefaultNStar}
	a := Compute(d, Question{Days: 10}, experiments.InferenceSequential)
	if len(a.Metrics) != 2 || a.Metrics[1].Variant != "parked" || a.Metrics[1].Problem == "" || a.Metrics[1].FixedHorizon != nil {
		t.Fatalf("rows %+v", a.Metrics)
	}
	m := a.Metrics[0]
	// The linearised values, written out: R = 21/11, (num - R·den)/mean(den).
	r, meanDen := 21.0/11, 11.0/6
	var ss, mu float64
	for i := range num {
		mu += (num[i] - r*den[i]) / meanDen / 6
	}
	for i := range num {
		v := (num[i]-r*den[i])/meanDen - mu
		ss += 2 * v * v // both arms hold the same values
	}
	sd := math.Sqrt(ss / 10)
	if math.Abs(m.Baseline-r) > 1e-12 || math.Abs(m.SD-sd) > 1e-12 || m.UsersSoFar != 12 || m.PairUsersPerDay != 6 {
		t.Fatalf("ratio row %+v, want baseline %v sd %v", m, r, sd)
	}
	want, err := stats.MDE(stats.PowerDesign{SD: sd, TreatmentShare: 0.5}, 12+10*m.PairUsersPerDay)
	if err != nil || m.FixedHorizon == nil || math.Abs(m.FixedHorizon.MDE-want) > 1e-12 {
		t.Fatalf("fixed horizon %+v, want MDE %v (%v)", m.FixedHorizon, want, err)
	}
}
