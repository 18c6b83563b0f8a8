package stats

import (
	"runtime"
	"testing"
)

func resamplingArms() (control, treatment []float64) {
	for i := range 300 {
		control = append(control, float64(i%17)+0.25*float64(i%5))
		treatment = append(treatment, float64(i%19)+0.3*float64(i%7))
	}
	return control, treatment
}

// TestResamplingIsReproducible checks the same seed gives the same answer
// however many goroutines share the draws, and another seed another answer.
func TestResamplingIsReproducible(t *testing.T) {
	control, treatment := resamplingArms()
	for _, m := range []Method{Permutation, Bootstrap} {
		opt := Options{MaxDraws: 1000, Seed: 42}
		first, err := Compare(m, control, treatment, opt)
		if err != nil {
			t.Fatal(err)
		}
		previous := runtime.GOMAXPROCS(1)
		single, _ := Compare(m, control, treatment, opt)
		runtime.GOMAXPROCS(previous)
		if !sameResult(single, first) {
			t.Errorf("%s: GOMAXPROCS 1 gave %+v, want %+v", m, single, first)
		}
		opt.Seed = 43
		other, _ := Compare(m, control, treatment, opt)
		if other.CILow == first.CILow && other.CIHigh == first.CIHigh {
			t.Errorf("%s: seeds 42 and 43 gave the same CI [%v, %v]", m, first.CILow, first.CIHigh)
		}
	}
}

func sameResult(a, b Comparison) bool {
	return a.Statistic == b.Statistic && a.PValue == b.PValue && a.Effect == b.Effect &&
		a.CILow == b.CILow && a.CIHigh == b.CIHigh && a.DrawsUsed == b.DrawsUsed && *a.RelLift == *b.RelLift
}

func TestWorkCapReducesDraws(t *testing.T) {
	control, treatment := resamplingArms()
	perDraw := len(control) + len(treatment)
	got, err := Compare(Bootstrap, control, treatment, Options{MaxDraws: 5000, MaxWork: int64(perDraw * 700)})
	if err != nil {
		t.Fatal(err)
	}
	if got.DrawsUsed != 700 {
		t.Errorf("bootstrap used %d draws, want 700 (work cap)", got.DrawsUsed)
	}
	got, _ = Compare(Bootstrap, control, treatment, Options{MaxDraws: 5000, MaxWork: 1})
	if got.DrawsUsed != minDraws {
		t.Errorf("bootstrap used %d draws under a tiny work cap, want the floor %d", got.DrawsUsed, minDraws)
	}
	got, _ = Compare(Permutation, control, treatment, Options{MaxDraws: 50})
	if got.DrawsUsed != 50 {
		t.Errorf("permutation used %d draws, want the budget 50", got.DrawsUsed)
	}
}

// TestPermutationSmallestP checks that a split no relabelling can beat gets
// p = 1/(m+1) exactly, and a null split p = 1.
func TestPermutationSmallestP(t *testing.T) {
	separated, err := Compare(Permutation, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, []float64{101, 102, 103, 104, 105, 106, 107, 108, 109, 110}, Options{MaxDraws: 999})
	if err != nil {
		t.Fatal(err)
	}
	// only the observed split and its mirror are this extreme, 2 of
	// C(20,10) = 184,756, so 999 draws almost surely find none
	if separated.PValue != 1.0/1000 {
		t.Errorf("separated arms: p = %v, want 1/1000", separated.PValue)
	}
	null, _ := Compare(Permutation, []float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, Options{MaxDraws: 999})
	if null.PValue != 1 {
		t.Errorf("identical arms: p = %v, want 1", null.PValue)
	}
}
