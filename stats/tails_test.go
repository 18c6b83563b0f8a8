package stats

import (
	"fmt"
	"testing"
)

// TestTailsMatchR checks the survival functions far into the tail, where
// 1 - cdf would have lost every digit.
func TestTailsMatchR(t *testing.T) {
	smallest := 1.0
	for _, ref := range reference(t).Tails {
		var got float64
		switch ref.Dist {
		case "normal":
			got = normalTwoSidedP(ref.X)
		case "t":
			got = studentTwoSidedP(ref.X, ref.DF)
		case "chisq":
			got = chiSquareSurvival(ref.X, int(ref.DF))
		default:
			t.Fatalf("unknown distribution %q", ref.Dist)
		}
		assertP(t, fmt.Sprintf("%s(x=%v, df=%v)", ref.Dist, ref.X, ref.DF), got, ref.P)
		smallest = min(smallest, ref.P)
	}
	if smallest > 1e-280 {
		t.Errorf("smallest reference tail p is %v; the vectors should reach 1e-280", smallest)
	}
}

func TestStudentPIsSymmetricAndBounded(t *testing.T) {
	for _, df := range []float64{1, 3.5, 1e4} {
		for _, x := range []float64{0, 0.3, 4} {
			p, q := studentTwoSidedP(x, df), studentTwoSidedP(-x, df)
			if p != q || p < 0 || p > 1 {
				t.Errorf("df %v: p(%v) = %v, p(%v) = %v", df, x, p, -x, q)
			}
		}
	}
}
