package stats

import (
	"fmt"
	"math"
)

// Non-inferiority decisions.
const (
	NonInferior  = "non_inferior"
	Inferior     = "inferior"
	Inconclusive = "inconclusive"
)

// Margin is how much worse the treatment may be and still count as no
// worse: Value > 0 on the effect's scale (absolute difference) or on the
// relative lift (Relative), in the direction in which the metric is bad.
type Margin struct {
	Value    float64
	Relative bool
	// BadIsIncrease says higher is worse (latency, cost); otherwise lower
	// is worse (quality, conversion).
	BadIsIncrease bool
}

// NonInferiorityResult is the test of H0 "the treatment is worse than
// control by at least the margin".
type NonInferiorityResult struct {
	// PValue is below alpha exactly when Decision is non_inferior: twice the
	// one-sided tail (fixed horizon) or the always-valid p of the effect
	// shifted by the margin (sequential), i.e. a one-sided test at alpha/2,
	// the ICH E9 convention that matches the two-sided interval shown.
	PValue   float64
	Decision string
}

// NonInferiority tests c against the margin on the interval of the chosen
// mode (sequential: the always-valid interval, else the fixed-horizon
// one). The decision reads the interval: non_inferior when it lies wholly
// on the good side of the margin, inferior when wholly on the bad side,
// else inconclusive. ok is false when c has no interval on the margin's
// scale (undefined comparison, no relative lift, no always-valid form).
func NonInferiority(c Comparison, m Margin, sequential bool, opt Options) (res NonInferiorityResult, ok bool, err error) {
	opt, err = opt.withDefaults()
	if err != nil {
		return res, false, err
	}
	if !(m.Value > 0) || math.IsInf(m.Value, 0) {
		return res, false, fmt.Errorf("stats: non-inferiority margin %v must be a positive number", m.Value)
	}
	if c.Undefined != "" {
		return res, false, nil
	}
	d, se, low, high := c.Effect, c.SE, c.CILow, c.CIHigh
	if m.Relative {
		if c.RelLift == nil {
			return res, false, nil
		}
		d, se, low, high = *c.RelLift, c.RelSE, *c.RelCILow, *c.RelCIHigh
	}
	if sequential {
		if c.AlwaysValid == nil || (m.Relative && c.AlwaysValid.RelCILow == nil) {
			return res, false, nil
		}
		low, high = c.AlwaysValid.CILow, c.AlwaysValid.CIHigh
		if m.Relative {
			low, high = *c.AlwaysValid.RelCILow, *c.AlwaysValid.RelCIHigh
		}
	}
	if se <= 0 {
		return res, false, nil
	}
	// Orient so that larger is better and the bound is at -margin.
	if m.BadIsIncrease {
		d, low, high = -d, -high, -low
	}
	shifted := d + m.Value // > 0 is evidence of non-inferiority
	res.PValue = 1
	if shifted > 0 {
		if sequential {
			res.PValue = ConfidenceSequence(shifted, se, c.NControl+c.NTreatment, opt.NStar, opt.Alpha).P
		} else {
			res.PValue = math.Min(1, normalTwoSidedP(shifted/se))
		}
	}
	switch {
	case low > -m.Value:
		res.Decision = NonInferior
	case high < -m.Value:
		res.Decision = Inferior
	default:
		res.Decision = Inconclusive
	}
	return res, true, nil
}
