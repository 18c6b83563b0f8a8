package stats

import (
	"math/rand/v2"
	"slices"
	"sort"
)

// bootstrapTest resamples each arm with replacement and reports the
// percentile CI of the difference in means. Its p inverts that CI: the
// smallest level at which the percentile interval excludes 0, with the +1
// correction of a Monte Carlo p (bootstrapP).
func bootstrapTest(out *Comparison, a arms, opt Options) {
	draws := opt.drawsFor(a.c.n + a.t.n)
	diffs := bootstrapDifferences(a.control, a.treatment, draws, opt.Seed)
	diff := a.t.mean - a.c.mean
	out.Statistic, out.Effect = diff, diff
	out.CILow, out.CIHigh = percentileCI(diffs, opt.Alpha)
	out.PValue = bootstrapP(diffs)
	out.DrawsUsed = draws
}

// bootstrapDifferences returns draws replicates of mean(treatment*) -
// mean(control*), sorted ascending.
func bootstrapDifferences(control, treatment []float64, draws int, seed uint64) []float64 {
	diffs := make([]float64, draws)
	noScratch := func() struct{} { return struct{}{} }
	forEachChunk(draws, noScratch, func(_ struct{}, chunk, first, count int) {
		src := newStream(seed, purposeBootstrap, chunk)
		for d := first; d < first+count; d++ {
			diffs[d] = resampledMean(src, treatment) - resampledMean(src, control)
		}
	})
	slices.Sort(diffs)
	return diffs
}

func resampledMean(src *rand.PCG, xs []float64) float64 {
	n := uint64(len(xs))
	var sum float64
	for range xs {
		sum += xs[uniformIndex(src, n)]
	}
	return sum / float64(n)
}

// percentileCI is the (alpha/2, 1-alpha/2) type-7 quantile pair of sorted
// bootstrap replicates.
func percentileCI(sorted []float64, alpha float64) (low, high float64) {
	return quantileSorted(sorted, alpha/2), quantileSorted(sorted, 1-alpha/2)
}

// bootstrapP is min(1, 2·min(#{d <= 0} + 1, #{d >= 0} + 1) / (B + 1)) over
// sorted replicates d.
func bootstrapP(sorted []float64) float64 {
	atMostZero := sort.Search(len(sorted), func(i int) bool { return sorted[i] > 0 })
	atLeastZero := len(sorted) - sort.SearchFloat64s(sorted, 0)
	tail := min(atMostZero, atLeastZero) + 1
	return min(1, 2*float64(tail)/float64(len(sorted)+1))
}
