package stats

import "math"

// welchT is Welch's unequal-variance t-test on the difference in means with
// Welch–Satterthwaite degrees of freedom, as R's t.test(treatment, control).
func welchT(out *Comparison, a arms, opt Options) {
	c, t := a.c, a.t
	vc, vt := c.varianceOfMean(), t.varianceOfMean()
	se := math.Sqrt(vc + vt)
	df := (vc + vt) * (vc + vt) / (vc*vc/float64(c.n-1) + vt*vt/float64(t.n-1))
	diff := t.mean - c.mean
	stat := diff / se
	half := studentQuantile(1-opt.Alpha/2, df) * se
	out.Statistic = stat
	out.PValue = studentTwoSidedP(stat, df)
	out.Effect, out.CILow, out.CIHigh = diff, diff-half, diff+half
	out.SE = se
}
