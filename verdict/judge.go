package verdict

import (
	"math"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/results"
)

// Significance is the FDR-adjusted level a row must also pass to be called
// better or worse (docs/results.md, "The badge").
const Significance = 0.05

// Outcomes of one row (a metric, a treatment arm against control).
const (
	Better       = "better"       // the interval excludes 0 on the good side of the goal
	Worse        = "worse"        // ... on the bad side
	Higher       = "higher"       // excludes 0 upwards, the metric has no goal
	Lower        = "lower"        // excludes 0 downwards, the metric has no goal
	Inconclusive = "inconclusive" // the interval holds 0, or the FDR-adjusted p is >= Significance
	NoTest       = "no_test"      // no comparison could be computed
)

// Scales of a headline interval.
const (
	Relative = "relative" // a fraction of control's mean
	Absolute = "absolute" // the metric's own unit
)

// Judgement is a row read against its metric's goal, on the interval the
// row shows: the relative lift's when defined, else the absolute effect's.
type Judgement struct {
	Outcome string `json:"outcome"`
	// Scale is absent for a primary metric the run has no row for (the
	// verdict's no_test call): there is no interval to have a scale.
	Scale    string  `json:"scale,omitempty"`
	Estimate float64 `json:"estimate"`
	CILow    float64 `json:"ci_low"`
	CIHigh   float64 `json:"ci_high"`
	// HeldBackByFDR: the interval excludes 0 but the FDR-adjusted p does
	// not pass, so the row is inconclusive across the run's comparisons.
	HeldBackByFDR bool `json:"held_back_by_fdr,omitempty"`
}

// Interval is the headline interval a row shows: relative when defined.
func Interval(r results.Row) (scale string, est, low, high float64) {
	if r.RelLift != nil && r.RelCILow != nil && r.RelCIHigh != nil {
		return Relative, *r.RelLift, *r.RelCILow, *r.RelCIHigh
	}
	return Absolute, r.Effect, r.CILow, r.CIHigh
}

// Judge reads a row against goal (increase, decrease or ""). The badge,
// the verdict and the CLI all call it, so they cannot disagree with the
// interval printed beside them.
func Judge(r results.Row, goal string) Judgement {
	scale, est, low, high := Interval(r)
	j := Judgement{Outcome: Inconclusive, Scale: scale, Estimate: est, CILow: low, CIHigh: high}
	if r.Undefined != "" || math.IsNaN(low) || math.IsNaN(high) {
		j.Outcome = NoTest
		return j
	}
	var dir string
	switch {
	case low > 0:
		dir = experiments.GoalIncrease
	case high < 0:
		dir = experiments.GoalDecrease
	default:
		return j
	}
	if !(r.PValueFDR < Significance) {
		j.HeldBackByFDR = true
		return j
	}
	switch {
	case goal == "" && dir == experiments.GoalIncrease:
		j.Outcome = Higher
	case goal == "":
		j.Outcome = Lower
	case dir == goal:
		j.Outcome = Better
	default:
		j.Outcome = Worse
	}
	return j
}
