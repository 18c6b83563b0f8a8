package stats

import (
	"math"
	"math/rand/v2"
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
