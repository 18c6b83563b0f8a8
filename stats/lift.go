package stats

import "math"

// setRelativeLift sets the relative lift of the treatment mean over the
// control mean, with a delta-method CI from the normal quantile:
// Var(mt/mc) ≈ Var(mt)/mc² + mt²·Var(mc)/mc⁴.
func (c *Comparison) setRelativeLift(control, treatment moments, alpha float64) {
	if control.mean == 0 {
		c.RelUndefinedReason = "control mean is 0"
		return
	}
	mc, mt := control.mean, treatment.mean
	lift := (mt - mc) / mc
	se := math.Sqrt(treatment.varianceOfMean()/(mc*mc) + mt*mt*control.varianceOfMean()/(mc*mc*mc*mc))
	half := normalQuantile(1-alpha/2) * se
	low, high := lift-half, lift+half
	for _, v := range []float64{lift, low, high} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			c.RelUndefinedReason = "relative lift is not finite (control mean too close to 0)"
			return
		}
	}
	c.RelLift, c.RelCILow, c.RelCIHigh = &lift, &low, &high
}
