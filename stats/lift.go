package stats

import "math"

// setRelativeLift sets the relative lift of the treatment mean over the
// control mean, with a delta-method CI from the normal quantile.
func (c *Comparison) setRelativeLift(control, treatment moments, alpha float64) {
	c.setRelativeLiftOf(control.mean, treatment.mean, control.varianceOfMean(), treatment.varianceOfMean(), alpha)
}

// setRelativeLiftOf sets the relative lift mt/mc - 1 of two independent
// estimates with variances vc and vt, by the delta method:
// Var(mt/mc) ≈ vt/mc² + mt²·vc/mc⁴.
func (c *Comparison) setRelativeLiftOf(mc, mt, vc, vt, alpha float64) {
	if mc == 0 {
		c.RelUndefinedReason = "control mean is 0"
		return
	}
	lift := (mt - mc) / mc
	se := math.Sqrt(vt/(mc*mc) + mt*mt*vc/(mc*mc*mc*mc))
	half := normalQuantile(1-alpha/2) * se
	low, high := lift-half, lift+half
	if !finite(lift, low, high) {
		c.RelUndefinedReason = "relative lift is not finite (control mean too close to 0)"
		return
	}
	c.RelLift, c.RelCILow, c.RelCIHigh, c.RelSE = &lift, &low, &high, se
}
