package stats

import (
	"math"
	"testing"
)

// Resampling results are Monte Carlo estimates, so they are compared with
// the reference within bounds that hold for any seed: p within 5 standard
// errors of a binomial proportion (plus the 1/(m+1) of the +1 correction),
// CI bounds within ciBootSEs bootstrap standard errors (a percentile's Monte
// Carlo SD with 10,000 draws is about 0.03 of them for smooth data).
const (
	resamplingDraws = 10_000
	ciBootSEs       = 0.15
)

func pBound(p float64, draws ...float64) float64 {
	variance := 0.0
	for _, m := range draws {
		variance += p * (1 - p) / m
	}
	return 5*math.Sqrt(variance) + 3/resamplingDraws
}

func assertWithin(t *testing.T, what string, got, want, bound float64) {
	t.Helper()
	if math.Abs(got-want) > bound {
		t.Errorf("%s = %v, want %v ± %v", what, got, want, bound)
	}
}

func TestPermutationMatchesR(t *testing.T) {
	f := reference(t)
	for _, ref := range f.Permutation {
		name, got := compareReference(t, f, Permutation, ref, Options{MaxDraws: resamplingDraws, Seed: 7})
		if got.DrawsUsed != resamplingDraws {
			t.Errorf("%s: %d draws used, want %d", name, got.DrawsUsed, resamplingDraws)
		}
		draws := []float64{resamplingDraws}
		if !ref.Exact {
			draws = append(draws, ref.ReferenceDraws)
		}
		assertWithin(t, name+" p", got.PValue, ref.PValue, pBound(ref.PValue, draws...))
		assertClose(t, name+" effect", got.Effect, *ref.Effect, ref.BootSE)
		assertWithin(t, name+" ci low", got.CILow, ref.CILow, ciBootSEs*ref.BootSE)
		assertWithin(t, name+" ci high", got.CIHigh, ref.CIHigh, ciBootSEs*ref.BootSE)
	}
}

func TestBootstrapMatchesR(t *testing.T) {
	f := reference(t)
	for _, ref := range f.Bootstrap {
		name, got := compareReference(t, f, Bootstrap, ref, Options{MaxDraws: resamplingDraws, Seed: 11})
		if got.DrawsUsed != resamplingDraws {
			t.Errorf("%s: %d draws used, want %d", name, got.DrawsUsed, resamplingDraws)
		}
		assertWithin(t, name+" p", got.PValue, ref.PValue, pBound(ref.PValue, resamplingDraws, ref.Draws))
		assertClose(t, name+" effect", got.Effect, *ref.Effect, ref.BootSE)
		assertWithin(t, name+" ci low", got.CILow, ref.CILow, ciBootSEs*ref.BootSE)
		assertWithin(t, name+" ci high", got.CIHigh, ref.CIHigh, ciBootSEs*ref.BootSE)
	}
}
