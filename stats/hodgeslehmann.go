package stats

import (
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
)

// shiftEstimate is a Hodges–Lehmann location shift with its CI.
type shiftEstimate struct{ estimate, low, high float64 }

// hodgesLehmann estimates the shift of xs over ys as the median of all
// nx·ny pairwise differences x - y, with the large-sample distribution-free
// CI [d(k), d(N+1-k)], k = floor(N/2 - zσ + 0.5) clamped to [1, N]
// (Hollander & Wolfe: the integer closest to N/2 - z·σ), where zσ is the
// normal quantile times the test's tie-corrected σ of U. Both slices must be
// sorted. The differences are never materialized: each order statistic is
// found by narrowing a bracket with O(nx + ny) counts (kth).
func hodgesLehmann(xs, ys []float64, zSigma float64) shiftEstimate {
	d := pairwiseDifferences{xs: xs, ys: ys}
	n := len(xs) * len(ys)
	var median float64
	if n%2 == 1 {
		median = d.kth((n + 1) / 2)
	} else {
		median = (d.kth(n/2) + d.kth(n/2+1)) / 2
	}
	k := int(math.Floor(float64(n)/2 - zSigma + 0.5))
	k = min(max(k, 1), n)
	return shiftEstimate{estimate: median, low: d.kth(k), high: d.kth(n + 1 - k)}
}

// pairwiseDifferences is the implicit multiset {x - y} of two sorted slices.
type pairwiseDifferences struct{ xs, ys []float64 }

// enumerateLimit is the number of candidate differences below which kth
// stops narrowing and sorts the candidates.
const enumerateLimit = 1 << 15

// kth returns the k-th smallest difference (1-based) exactly as float64
// subtraction computes it. It narrows a bracket (lo, hi] holding the answer,
// with count(lo) < k <= count(hi), by counting at a pivot: the value
// interpolated from the counts while that keeps halving the bracket (counts
// are smooth for large samples: about a dozen passes at 10^12 differences),
// else the midpoint in float64 order (at most 64 halvings, whatever the
// spread); then it sorts the few differences left in the bracket.
func (d pairwiseDifferences) kth(k int) float64 {
	lo := math.Nextafter(d.xs[0]-d.ys[len(d.ys)-1], math.Inf(-1))
	hi := d.xs[len(d.xs)-1] - d.ys[0]
	countLo, countHi := 0, len(d.xs)*len(d.ys)
	interpolate, overshootUp := true, false
	for countHi-countLo > enumerateLimit {
		keyLo, keyHi := orderedKey(lo), orderedKey(hi)
		if keyHi-keyLo < 2 { // no float strictly between: every candidate equals hi
			return hi + 0
		}
		pivot := fromOrderedKey(keyLo + (keyHi-keyLo)/2)
		if interpolate {
			// aim a little past k, alternately above and below, so that
			// both ends of the bracket move
			margin := float64(countHi-countLo) / 32
			if overshootUp = !overshootUp; !overshootUp {
				margin = -margin
			}
			share := (float64(k-countLo) + margin) / float64(countHi-countLo)
			if v := lo + (hi-lo)*share; v > lo && v < hi {
				pivot = v
			}
		}
		before := countHi - countLo
		if c := d.countAtMost(pivot); c >= k {
			hi, countHi = pivot, c
		} else {
			lo, countLo = pivot, c
		}
		interpolate = countHi-countLo <= before/2

	}
	return d.kthInBracket(lo, hi, k-countLo) + 0 // + 0 turns -0 into 0
}

// kthInBracket sorts the differences in (lo, hi] and returns the k-th.
func (d pairwiseDifferences) kthInBracket(lo, hi float64, k int) float64 {
	var candidates []float64
	jHi, jLo := 0, 0 // first y with x - y <= hi, and <= lo
	for _, x := range d.xs {
		for jHi < len(d.ys) && x-d.ys[jHi] > hi {
			jHi++
		}
		for jLo < len(d.ys) && x-d.ys[jLo] > lo {
			jLo++
		}
		for _, y := range d.ys[jHi:jLo] {
			candidates = append(candidates, x-y)
		}
	}
	slices.Sort(candidates)
	return candidates[k-1]
}

// minCountSegment is the fewest xs worth a goroutine of their own in
// countAtMost.
const minCountSegment = 1 << 16

// countAtMost counts pairs with x - y <= v, splitting xs over up to
// GOMAXPROCS goroutines when it is long: the count dominates the cost of
// the Hodges–Lehmann estimate.
func (d pairwiseDifferences) countAtMost(v float64) int {
	segments := min(runtime.GOMAXPROCS(0), 1+len(d.xs)/minCountSegment)
	if segments == 1 {
		return d.countSegment(d.xs, v)
	}
	counts := make([]int, segments)
	var wg sync.WaitGroup
	for s := range segments {
		part := d.xs[s*len(d.xs)/segments : (s+1)*len(d.xs)/segments]
		wg.Go(func() { counts[s] = d.countSegment(part, v) })
	}
	wg.Wait()
	total := 0
	for _, c := range counts {
		total += c
	}
	return total
}

// countSegment counts pairs (x, y) with x in xs and x - y <= v. For rising
// x the first y with x - y <= v only moves right, so after one binary search
// for the start a single pass over both slices suffices.
func (d pairwiseDifferences) countSegment(xs []float64, v float64) int {
	ys := d.ys
	j := sort.Search(len(ys), func(j int) bool { return xs[0]-ys[j] <= v })
	count := 0
	for _, x := range xs {
		for j < len(ys) && x-ys[j] > v {
			j++
		}
		count += len(ys) - j
	}
	return count
}

// orderedKey maps float64 to uint64 so that integer order is float order.
func orderedKey(f float64) uint64 {
	b := math.Float64bits(f)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

func fromOrderedKey(k uint64) float64 {
	if k>>63 == 1 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}
