package stats

import "fmt"

// CUPEDSummary describes the covariate adjustment behind a Comparison.
type CUPEDSummary struct {
	// Theta is Cov(y, x) / Var(x) over the users of both arms together.
	Theta float64
	// VarianceReduction is 1 - Var(adjusted effect) / Var(raw effect): the
	// share of the squared standard error of the difference that the
	// covariate removed (negative only by sampling noise).
	VarianceReduction float64
}

// CompareCUPED compares the arms on CUPED-adjusted values (Deng et al.,
// 2013): y - theta·(x - mean(x)), with x each user's pre-exposure value of
// the same metric and theta and mean(x) pooled over both arms, so the
// adjustment is the same function of x in each arm and leaves the effect
// unbiased. yc[i] pairs with xc[i]. When x does not vary there is nothing
// to adjust: the result is Compare(m, yc, yt) with CUPED nil. The adjusted values are no longer
// 0/1, so a z_test metric is compared with Welch's t on them (at the
// sample sizes where the z-test holds the two agree); rank and resampling
// tests have no CUPED form.
func CompareCUPED(m Method, yc, xc, yt, xt []float64, opt Options) (Comparison, error) {
	if m != WelchT && m != ZTest {
		return Comparison{}, fmt.Errorf("stats: CUPED needs a mean-based test (welch_t or z_test), not %q", m)
	}
	if len(yc) != len(xc) || len(yt) != len(xt) {
		return Comparison{}, fmt.Errorf("stats: CUPED needs one covariate per user (control %d/%d, treatment %d/%d)", len(yc), len(xc), len(yt), len(xt))
	}
	for _, a := range []struct {
		name string
		xs   []float64
	}{{"control covariate", xc}, {"treatment covariate", xt}} {
		if err := ValidateValues(a.xs); err != nil {
			return Comparison{}, fmt.Errorf("stats: %s: %w", a.name, err)
		}
	}
	if m == ZTest {
		for arm, ys := range map[string][]float64{"control": yc, "treatment": yt} {
			if err := validateArm(arm, ys, ZTest); err != nil {
				return Comparison{}, err
			}
		}
	}
	var co comoments
	for i := range yc {
		co.add(xc[i], yc[i])
	}
	for i := range yt {
		co.add(xt[i], yt[i])
	}
	if co.mxx == 0 {
		// No covariate information (say, no user has pre-period data):
		// nothing to adjust, so the metric's own test, CUPED nil.
		return Compare(m, yc, yt, opt)
	}
	theta := co.slope()
	adjust := func(ys, xs []float64) []float64 {
		out := make([]float64, len(ys))
		for i, y := range ys {
			out[i] = y - theta*(xs[i]-co.meanX)
		}
		return out
	}
	out, err := Compare(WelchT, adjust(yc, xc), adjust(yt, xt), opt)
	if err != nil {
		return Comparison{}, err
	}
	summary := &CUPEDSummary{Theta: theta}
	raw := momentsOf(yc).varianceOfMean() + momentsOf(yt).varianceOfMean()
	if out.Undefined == "" && raw > 0 {
		summary.VarianceReduction = 1 - out.SE*out.SE/raw
	}
	out.CUPED = summary
	return out, nil
}

// comoments accumulates the means of x and y, the sum of squared
// deviations of x and the co-moment of x and y in one pass (Welford).
type comoments struct {
	n            int
	meanX, meanY float64
	mxx, mxy     float64
}

func (c *comoments) add(x, y float64) {
	c.n++
	dx := x - c.meanX
	c.meanX += dx / float64(c.n)
	c.meanY += (y - c.meanY) / float64(c.n)
	c.mxx += dx * (x - c.meanX)
	c.mxy += dx * (y - c.meanY)
}

// slope is Cov(x, y) / Var(x), or 0 when x does not vary (no covariate
// information: no adjustment).
func (c comoments) slope() float64 {
	if c.mxx == 0 {
		return 0
	}
	return c.mxy / c.mxx
}
