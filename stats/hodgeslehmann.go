package stats

import "math"

// shiftEstimate is a Hodges–Lehmann location shift with its CI.
type shiftEstimate struct{ estimate, low, high float64 }

// hodgesLehmann estimates the shift of xs over ys as the median of all
// nx·ny pairwise differences x - y, with the large-sample distribution-free
// CI [d(k), d(N+1-k)], k = floor(N/2 - zσ + 0.5) clamped to [1, N]
// (Hollander & Wolfe: the integer closest to N/2 - z·σ), where zσ is the
// normal quantile times the test's tie-corrected σ of U. Both slices must be
// sorted. The differences are never materialized: each order statistic is
// found by bisection over float64 values with an O(nx + ny) count per step.
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

// kth returns the k-th smallest difference (1-based) exactly as float64
// subtraction computes it: the smallest float v with countAtMost(v) >= k,
// found by bisection on the order-preserving integer image of float64s
// (at most 64 steps).
func (d pairwiseDifferences) kth(k int) float64 {
	lo := orderedKey(d.xs[0] - d.ys[len(d.ys)-1])
	hi := orderedKey(d.xs[len(d.xs)-1] - d.ys[0])
	for lo < hi {
		mid := lo + (hi-lo)/2
		if d.countAtMost(fromOrderedKey(mid)) >= k {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return fromOrderedKey(hi) + 0 // + 0 turns -0 into 0
}

// countAtMost counts pairs with x - y <= v. For rising x the first y with
// x - y <= v only moves right, so one pass over both slices suffices.
func (d pairwiseDifferences) countAtMost(v float64) int {
	count, j := 0, 0
	for _, x := range d.xs {
		for j < len(d.ys) && x-d.ys[j] > v {
			j++
		}
		count += len(d.ys) - j
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
