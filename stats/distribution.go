package stats

import (
	"math"
	"slices"
)

// DefaultBins is the histogram bin count used when Distributions gets bins < 1.
const DefaultBins = 30

// Distribution describes one arm's values. Quantiles are R's type 7; SD is
// the sample SD (n - 1). All fields are 0 for an empty arm.
type Distribution struct {
	N                      int
	Mean, SD, Min, Max     float64
	P5, P25, P50, P75, P95 float64
	Histogram              []int // counts per bin of the shared edges
}

// Distributions describes each arm and counts its values into bins equal-
// width bins shared by all arms, spanning the smallest to the largest value
// of any arm; each bin is [edge i, edge i+1) except the last, which is
// closed. When every value is the same v the edges span [v - 0.5, v + 0.5].
// edges has bins + 1 entries, or is nil when no arm has a value.
// Non-finite values are skipped (Compare rejects them; ValidateValues finds
// them).
func Distributions(arms [][]float64, bins int) (edges []float64, dists []Distribution) {
	if bins < 1 {
		bins = DefaultBins
	}
	sorted := make([][]float64, len(arms))
	lo, hi, seen := math.Inf(1), math.Inf(-1), false
	for i, arm := range arms {
		sorted[i] = finiteSorted(arm)
		if s := sorted[i]; len(s) > 0 {
			lo, hi, seen = min(lo, s[0]), max(hi, s[len(s)-1]), true
		}
	}
	if seen {
		edges = binEdges(lo, hi, bins)
	}
	dists = make([]Distribution, len(arms))
	for i, s := range sorted {
		dists[i] = describeSorted(s)
		if edges != nil {
			dists[i].Histogram = histogram(s, edges)
		}
	}
	return edges, dists
}

func finiteSorted(xs []float64) []float64 {
	s := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			s = append(s, x)
		}
	}
	slices.Sort(s)
	return s
}

func describeSorted(s []float64) Distribution {
	if len(s) == 0 {
		return Distribution{}
	}
	m := momentsOf(s)
	return Distribution{
		N: m.n, Mean: m.mean, SD: m.sd(), Min: s[0], Max: s[len(s)-1],
		P5: quantileSorted(s, 0.05), P25: quantileSorted(s, 0.25), P50: quantileSorted(s, 0.5),
		P75: quantileSorted(s, 0.75), P95: quantileSorted(s, 0.95),
	}
}

func binEdges(lo, hi float64, bins int) []float64 {
	if lo == hi {
		lo, hi = lo-0.5, hi+0.5
	}
	edges := make([]float64, bins+1)
	for i := range edges {
		edges[i] = lo + (hi-lo)*float64(i)/float64(bins)
	}
	edges[bins] = hi
	return edges
}

// histogram counts sorted values into the bins of edges in one pass.
func histogram(sorted, edges []float64) []int {
	counts := make([]int, len(edges)-1)
	bin := 0
	for _, x := range sorted {
		for bin < len(counts)-1 && x >= edges[bin+1] {
			bin++
		}
		counts[bin]++
	}
	return counts
}
