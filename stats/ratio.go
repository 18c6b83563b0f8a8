package stats

import (
	"fmt"
	"math"
)

// Test names of the comparisons that are not a Method of Compare.
const (
	TestDeltaRatio        = "delta_ratio"
	TestClusteredQuantile = "clustered_quantile"
)

// RatioArm is one arm of a ratio metric: per user, the sum of the
// numerator and the sum of the denominator (user i is Num[i], Den[i]).
type RatioArm struct {
	Num, Den []float64
}

// ratioEstimate is an arm's ratio of means and the delta-method variance
// of it, with the covariance of numerator and denominator:
// Var(R) ≈ (Var(N) - 2R·Cov(N, D) + R²·Var(D)) / (n·mean(D)²).
type ratioEstimate struct {
	n        int
	ratio    float64
	variance float64
}

func (a RatioArm) estimate() (ratioEstimate, string) {
	var num, den moments
	var co comoments
	for i := range a.Num {
		num.add(a.Num[i])
		den.add(a.Den[i])
		co.add(a.Den[i], a.Num[i])
	}
	if num.n < 2 {
		return ratioEstimate{n: num.n}, ""
	}
	if den.mean == 0 {
		return ratioEstimate{n: num.n}, "an arm has a denominator of 0"
	}
	r := num.mean / den.mean
	cov := co.mxy / float64(co.n-1)
	v := (num.variance() - 2*r*cov + r*r*den.variance()) / (float64(num.n) * den.mean * den.mean)
	return ratioEstimate{n: num.n, ratio: r, variance: max(v, 0)}, ""
}

// CompareRatio compares a ratio metric (the arm's total numerator over its
// total denominator, e.g. cost per call) between arms. Users are the unit
// of randomisation, so the variance is the delta method over per-user sums
// rather than a per-call variance that would ignore the clustering. The
// effect is the difference of the ratios with a normal (Wald) interval;
// the relative lift is the ratio of ratios minus 1.
func CompareRatio(control, treatment RatioArm, opt Options) (Comparison, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Comparison{}, err
	}
	for _, a := range []struct {
		name string
		arm  RatioArm
	}{{"control", control}, {"treatment", treatment}} {
		if len(a.arm.Num) != len(a.arm.Den) {
			return Comparison{}, fmt.Errorf("stats: %s: %d numerators for %d denominators", a.name, len(a.arm.Num), len(a.arm.Den))
		}
		for _, xs := range [][]float64{a.arm.Num, a.arm.Den} {
			if err := ValidateValues(xs); err != nil {
				return Comparison{}, fmt.Errorf("stats: %s: %w", a.name, err)
			}
		}
	}
	c, reasonC := control.estimate()
	t, reasonT := treatment.estimate()
	out := Comparison{Test: TestDeltaRatio, NControl: c.n, NTreatment: t.n}
	switch {
	case c.n < 2 || t.n < 2:
		return out.undefined(fmt.Sprintf("each arm needs at least 2 values (control %d, treatment %d)", c.n, t.n)), nil
	case reasonC != "" || reasonT != "":
		return out.undefined(reasonC + reasonT), nil
	case c.variance == 0 && t.variance == 0:
		return out.undefined("zero variance in both arms"), nil
	}
	out.fillNormal(c.ratio, t.ratio, c.variance, t.variance, opt)
	return out, nil
}

// fillNormal sets the effect t - c of two independent asymptotically
// normal estimates with variances vc and vt: Wald interval and p, relative
// lift, and the always-valid form.
func (out *Comparison) fillNormal(c, t, vc, vt float64, opt Options) {
	d, se := t-c, math.Sqrt(vc+vt)
	iv := NormalInterval(d, se, opt.Alpha)
	out.Statistic, out.PValue = d/se, iv.P
	out.Effect, out.CILow, out.CIHigh, out.SE = d, iv.Low, iv.High, se
	if !out.finite() {
		*out = out.undefined("result is not finite (values too large)")
		return
	}
	out.setRelativeLiftOf(c, t, vc, vt, opt.Alpha)
	out.setAlwaysValid(opt.NStar, opt.Alpha)
}
