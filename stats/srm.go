package stats

import (
	"fmt"
	"math"
)

// SRM gate values.
const (
	GatePass         = "pass"
	GateFail         = "fail"
	GateInsufficient = "insufficient"
)

// SRMFailP is the p below which a sample ratio mismatch fails the gate.
const SRMFailP = 0.001

// srmMinPerArm is the average count per arm below which the gate is
// insufficient: the chi-square approximation needs expected counts near 5+.
const srmMinPerArm = 8

// SRMResult is a sample-ratio-mismatch check of exposed users per arm.
type SRMResult struct {
	ChiSquare float64
	DF        int
	PValue    float64
	Gate      string // GatePass, GateFail (p < 0.001) or GateInsufficient (total under 8 per arm)
}

// SRM tests observed counts per arm against expected weights with a
// chi-square goodness-of-fit test, as R's chisq.test(x, p = w / sum(w)).
// Weights must be positive and finite (drop arms with zero weight before).
func SRM(observed []int64, weights []float64) (SRMResult, error) {
	if len(observed) != len(weights) {
		return SRMResult{}, fmt.Errorf("stats: srm: %d counts but %d weights", len(observed), len(weights))
	}
	if len(observed) < 2 {
		return SRMResult{}, fmt.Errorf("stats: srm: need at least 2 arms, got %d", len(observed))
	}
	var total, weightSum float64
	for i, o := range observed {
		if o < 0 {
			return SRMResult{}, fmt.Errorf("stats: srm: count %d is negative (%d)", i, o)
		}
		w := weights[i]
		if !(w > 0) || math.IsInf(w, 0) {
			return SRMResult{}, fmt.Errorf("stats: srm: weight %d is %v, want positive and finite", i, w)
		}
		total += float64(o)
		weightSum += w
	}
	res := SRMResult{DF: len(observed) - 1, PValue: 1}
	if total > 0 {
		for i, o := range observed {
			expected := total * (weights[i] / weightSum)
			d := float64(o) - expected
			res.ChiSquare += d * d / expected
		}
		res.PValue = chiSquareSurvival(res.ChiSquare, res.DF)
	}
	switch {
	case total < srmMinPerArm*float64(len(observed)):
		res.Gate = GateInsufficient
	case res.PValue < SRMFailP:
		res.Gate = GateFail
	default:
		res.Gate = GatePass
	}
	return res, nil
}
