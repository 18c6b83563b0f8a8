package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// permutationTest compares the difference in means against its distribution
// under random relabelling of the pooled users: p = (b + 1) / (m + 1) where b
// counts the m seeded draws at least as extreme (two-sided) as observed. Its
// CI is the bootstrap percentile CI with the same draw budget.
func permutationTest(out *Comparison, a arms, opt Options) {
	perm := newRelabelling(a.control, a.treatment)
	draws := opt.drawsFor(perm.chosen + a.c.n + a.t.n)
	b := perm.countExtreme(draws, opt.Seed)
	diffs := bootstrapDifferences(a.control, a.treatment, draws, opt.Seed)
	diff := a.t.mean - a.c.mean
	out.Statistic, out.Effect = diff, diff
	out.PValue = float64(b+1) / float64(draws+1)
	out.CILow, out.CIHigh = percentileCI(diffs, opt.Alpha)
	out.DrawsUsed = draws
}

// relabelling holds what each permutation draw needs. The difference in
// means is monotone in the treatment sum, so a draw is as extreme as the
// observed split when its treatment sum is at least as far from its null
// expectation.
type relabelling struct {
	pooled      []float64
	chosen      int     // users drawn per permutation: the smaller arm
	chosenIsT   bool    // whether the drawn users form the treatment arm
	total       float64 // sum of pooled values
	expectedT   float64 // treatment sum expected under the null
	observedDev float64 // |observed treatment sum - expectedT|
	tolerance   float64 // absorbs rounding of sums taken in another order
}

func newRelabelling(control, treatment []float64) relabelling {
	pooled := slices.Concat(treatment, control)
	total, absTotal := sum(pooled), 0.0
	for _, x := range pooled {
		absTotal += math.Abs(x)
	}
	nt := len(treatment)
	expectedT := total * float64(nt) / float64(len(pooled))
	return relabelling{
		pooled:      pooled,
		chosen:      min(nt, len(control)),
		chosenIsT:   nt <= len(control),
		total:       total,
		expectedT:   expectedT,
		observedDev: math.Abs(sum(treatment) - expectedT),
		tolerance:   1e-10 * absTotal,
	}
}

// countExtreme runs draws seeded permutations and counts the extreme ones.
func (r relabelling) countExtreme(draws int, seed uint64) int {
	chunks := (draws + drawsPerChunk - 1) / drawsPerChunk
	extremePerChunk := make([]int, chunks)
	type scratch struct {
		pool  []float64
		swaps []int
	}
	newScratch := func() scratch { return scratch{pool: slices.Clone(r.pooled), swaps: make([]int, r.chosen)} }
	forEachChunk(draws, newScratch, func(w scratch, chunk, _, count int) {
		src := newStream(seed, purposePermutation, chunk)
		for range count {
			if r.isExtreme(r.drawTreatmentSum(src, w.pool, w.swaps)) {
				extremePerChunk[chunk]++
			}
		}
	})
	b := 0
	for _, e := range extremePerChunk {
		b += e
	}
	return b
}

// drawTreatmentSum picks r.chosen users uniformly without replacement by a
// partial Fisher–Yates shuffle of pool, returns the treatment sum of that
// relabelling, then undoes the swaps so every draw starts from the same
// order and results do not depend on which goroutine ran which chunk.
func (r relabelling) drawTreatmentSum(src *rand.PCG, pool []float64, swaps []int) float64 {
	n := uint64(len(pool))
	var sum float64
	for i := range swaps {
		j := i + int(uniformIndex(src, n-uint64(i)))
		pool[i], pool[j] = pool[j], pool[i]
		swaps[i] = j
		sum += pool[i]
	}
	for i := len(swaps) - 1; i >= 0; i-- {
		j := swaps[i]
		pool[i], pool[j] = pool[j], pool[i]
	}
	if r.chosenIsT {
		return sum
	}
	return r.total - sum
}

func (r relabelling) isExtreme(treatmentSum float64) bool {
	return math.Abs(treatmentSum-r.expectedT) >= r.observedDev-r.tolerance
}
