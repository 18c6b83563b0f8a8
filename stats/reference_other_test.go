package stats

import (
	"fmt"
	"testing"
)

func TestSRMMatchesR(t *testing.T) {
	for _, ref := range reference(t).SRM {
		observed := make([]int64, len(ref.Observed))
		for i, o := range ref.Observed {
			observed[i] = int64(o)
		}
		name := fmt.Sprintf("srm %v vs %v", observed, ref.Weights)
		got, err := SRM(observed, ref.Weights)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.DF != int(ref.DF) {
			t.Errorf("%s: df %d, want %v", name, got.DF, ref.DF)
		}
		assertClose(t, name+" chi-square", got.ChiSquare, ref.ChiSquare, 1e-6)
		assertP(t, name+" p", got.PValue, ref.PValue)
	}
}

func TestPAdjustMatchesR(t *testing.T) {
	for i, ref := range reference(t).PAdjust {
		for method, pair := range map[string]struct{ got, want []float64 }{
			"BH":   {BenjaminiHochberg(ref.P), ref.BH},
			"holm": {Holm(ref.P), ref.Holm},
		} {
			if len(pair.got) != len(pair.want) {
				t.Fatalf("case %d %s: %d values, want %d", i, method, len(pair.got), len(pair.want))
			}
			for j := range pair.want {
				assertP(t, fmt.Sprintf("case %d %s[%d]", i, method, j), pair.got[j], pair.want[j])
			}
		}
	}
}

func TestDistributionMatchesR(t *testing.T) {
	for i, ref := range reference(t).Distribution {
		values := ref.Sample.expand()
		_, dists := Distributions([][]float64{values}, 10)
		got := dists[0]
		name := fmt.Sprintf("distribution %d (n=%d)", i, len(values))
		if got.N != len(values) {
			t.Errorf("%s: N = %d", name, got.N)
		}
		scale := ref.SD
		assertClose(t, name+" mean", got.Mean, ref.Mean, scale)
		assertClose(t, name+" sd", got.SD, ref.SD, 0)
		assertClose(t, name+" min", got.Min, ref.Min, 0)
		assertClose(t, name+" max", got.Max, ref.Max, 0)
		quantiles := []float64{got.P5, got.P25, got.P50, got.P75, got.P95}
		for j, q := range quantiles {
			assertClose(t, fmt.Sprintf("%s quantile %d", name, j), q, ref.Quantiles[j], scale)
		}
	}
}
