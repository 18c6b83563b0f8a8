package stats

import "math"

// zTest is the two-proportion z-test. The statistic uses the pooled standard
// error (the null says both arms share one proportion); the CI uses the
// unpooled one and is clipped to [-1, 1], as R's prop.test(correct = FALSE),
// whose X-squared is the square of this z.
func zTest(out *Comparison, a arms, opt Options) {
	nc, nt := float64(a.c.n), float64(a.t.n)
	sc, st := sum(a.control), sum(a.treatment) // exact: 0/1 values below 2^53
	pc, pt := sc/nc, st/nt
	pooled := (sc + st) / (nc + nt)
	diff := pt - pc
	stat := diff / math.Sqrt(pooled*(1-pooled)*(1/nc+1/nt))
	se := math.Sqrt(pt*(1-pt)/nt + pc*(1-pc)/nc)
	half := normalQuantile(1-opt.Alpha/2) * se
	out.Statistic = stat
	out.PValue = normalTwoSidedP(stat)
	out.Effect, out.SE = diff, se
	out.CILow, out.CIHigh = max(diff-half, -1), min(diff+half, 1)
}
