package stats

import (
	"math"
	"testing"
)

// TestPAdjustSkipsNaN checks NaN stays in place and does not count towards
// the family size, as NA in R's p.adjust.
func TestPAdjustSkipsNaN(t *testing.T) {
	withNaN := []float64{0.01, math.NaN(), 0.04, 0.03}
	without := []float64{0.01, 0.04, 0.03}
	for name, adjust := range map[string]func([]float64) []float64{"BH": BenjaminiHochberg, "holm": Holm} {
		got, want := adjust(withNaN), adjust(without)
		if !math.IsNaN(got[1]) {
			t.Errorf("%s: NaN became %v", name, got[1])
		}
		if got[0] != want[0] || got[2] != want[1] || got[3] != want[2] {
			t.Errorf("%s: %v, want %v around the NaN", name, got, want)
		}
	}
}

func TestPAdjustNeverLowersAndCapsAtOne(t *testing.T) {
	p := []float64{0.2, 0.9, 0.001, 0.5, 0.5}
	for name, adjusted := range map[string][]float64{"BH": BenjaminiHochberg(p), "holm": Holm(p)} {
		for i := range p {
			if adjusted[i] < p[i] || adjusted[i] > 1 {
				t.Errorf("%s: p %v adjusted to %v", name, p[i], adjusted[i])
			}
		}
	}
	if got := BenjaminiHochberg(nil); len(got) != 0 {
		t.Errorf("BH of no p-values: %v", got)
	}
}
