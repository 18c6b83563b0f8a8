package stats

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// TestPairwiseKthMatchesSorting checks the bisection selection against the
// explicitly sorted differences, with ties, negatives and zeros.
func TestPairwiseKthMatchesSorting(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		xs, ys := randomArm(r, 1+r.IntN(12)), randomArm(r, 1+r.IntN(12))
		slices.Sort(xs)
		slices.Sort(ys)
		var all []float64
		for _, x := range xs {
			for _, y := range ys {
				all = append(all, x-y)
			}
		}
		slices.Sort(all)
		d := pairwiseDifferences{xs: xs, ys: ys}
		for k := 1; k <= len(all); k++ {
			if got := d.kth(k); got != all[k-1] || (got == 0 && math.Signbit(got)) {
				t.Fatalf("trial %d: kth(%d) = %v, want %v", trial, k, got, all[k-1])
			}
		}
	}
}

// TestPairwiseKthNarrowsLargeBrackets uses enough differences that kth
// narrows before sorting, on smooth, tied and heavy-tailed data.
func TestPairwiseKthNarrowsLargeBrackets(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	shapes := map[string]func() float64{
		"normal": r.NormFloat64,
		"tied":   func() float64 { return float64(r.IntN(20)) },
		"heavy":  func() float64 { return math.Tan(math.Pi * (r.Float64() - 0.5)) },
	}
	for name, draw := range shapes {
		xs, ys := make([]float64, 700), make([]float64, 500)
		for i := range xs {
			xs[i] = draw()
		}
		for i := range ys {
			ys[i] = draw()
		}
		slices.Sort(xs)
		slices.Sort(ys)
		all := make([]float64, 0, len(xs)*len(ys))
		for _, x := range xs {
			for _, y := range ys {
				all = append(all, x-y)
			}
		}
		slices.Sort(all)
		d := pairwiseDifferences{xs: xs, ys: ys}
		for _, k := range []int{1, 17, len(all) / 40, len(all) / 2, len(all)/2 + 1, len(all) - 9, len(all)} {
			if got := d.kth(k); got != all[k-1] {
				t.Errorf("%s: kth(%d) = %v, want %v", name, k, got, all[k-1])
			}
		}
	}
}

// TestPairwiseCountSplitsLongSlices checks the count split over goroutines
// agrees with a single pass.
func TestPairwiseCountSplitsLongSlices(t *testing.T) {
	previous := runtime.GOMAXPROCS(max(3, runtime.GOMAXPROCS(0)))
	defer runtime.GOMAXPROCS(previous)
	r := rand.New(rand.NewPCG(8, 8))
	xs, ys := randomArm(r, 3*minCountSegment), randomArm(r, 40)
	slices.Sort(xs)
	slices.Sort(ys)
	d := pairwiseDifferences{xs: xs, ys: ys}
	for _, v := range []float64{-10, -1.5, -0.25, 0, 0.5, 3, 10} {
		if got, want := d.countAtMost(v), d.countSegment(xs, v); got != want {
			t.Errorf("countAtMost(%v) = %d, single pass %d", v, got, want)
		}
	}
}

func randomArm(r *rand.Rand, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(r.IntN(7)-3) * 0.5 // many ties, negatives and zeros
		if r.IntN(3) == 0 {
			xs[i] = r.NormFloat64()
		}
	}
	return xs
}

func TestOrderedKeyPreservesOrder(t *testing.T) {
	values := []float64{math.Inf(-1), -1e300, -1, -math.SmallestNonzeroFloat64, 0, math.SmallestNonzeroFloat64, 1, 1e300, math.Inf(1)}
	for i := 1; i < len(values); i++ {
		if orderedKey(values[i-1]) >= orderedKey(values[i]) {
			t.Errorf("key(%v) >= key(%v)", values[i-1], values[i])
		}
		if back := fromOrderedKey(orderedKey(values[i])); back != values[i] {
			t.Errorf("round trip of %v gave %v", values[i], back)
		}
	}
}
