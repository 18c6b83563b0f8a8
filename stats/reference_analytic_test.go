package stats

import (
	"fmt"
	"math"
	"testing"
)

func TestReferenceCoversEveryTest(t *testing.T) {
	f := reference(t)
	sections := map[string]int{
		"welch_t": len(f.WelchT), "mann_whitney": len(f.MannWhitney), "permutation": len(f.Permutation),
		"bootstrap": len(f.Bootstrap), "z_test": len(f.ZTest), "srm": len(f.SRM),
		"p_adjust": len(f.PAdjust), "distribution": len(f.Distribution), "tails": len(f.Tails),
	}
	total := 0
	for name, n := range sections {
		if n < 10 {
			t.Errorf("%s has %d reference cases, want at least 10", name, n)
		}
		total += n
	}
	if total < 200 {
		t.Errorf("%d reference cases in all, want at least 200", total)
	}
}

// compareReference runs method on a reference dataset and fails the test
// when the comparison is undefined.
func compareReference(t *testing.T, f *referenceFile, m Method, ref referenceComparison, opt Options) (string, Comparison) {
	t.Helper()
	name, control, treatment := f.arms(t, ref.Dataset)
	opt.Alpha = ref.Alpha
	got, err := Compare(m, control, treatment, opt)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if got.Undefined != "" {
		t.Fatalf("%s: undefined: %s", name, got.Undefined)
	}
	return name, got
}

func TestWelchMatchesR(t *testing.T) {
	f := reference(t)
	for _, ref := range f.WelchT {
		name, got := compareReference(t, f, WelchT, ref, Options{})
		assertClose(t, name+" t", got.Statistic, ref.Statistic, 1e-3)
		assertP(t, name+" p", got.PValue, ref.PValue)
		assertClose(t, name+" effect", got.Effect, *ref.Effect, ref.SE)
		assertClose(t, name+" ci low", got.CILow, ref.CILow, ref.SE)
		assertClose(t, name+" ci high", got.CIHigh, ref.CIHigh, ref.SE)
		assertRelativeLift(t, name, got, ref)
	}
}

func assertRelativeLift(t *testing.T, name string, got Comparison, ref referenceComparison) {
	t.Helper()
	if ref.RelLift == nil {
		if got.RelLift != nil || got.RelUndefinedReason == "" {
			t.Errorf("%s: relative lift %v with reason %q, want undefined", name, got.RelLift, got.RelUndefinedReason)
		}
		return
	}
	if got.RelLift == nil {
		t.Fatalf("%s: relative lift undefined (%s), want %v", name, got.RelUndefinedReason, *ref.RelLift)
	}
	halfWidth := (ref.RelCIHigh - ref.RelCILow) / 2
	assertClose(t, name+" rel lift", *got.RelLift, *ref.RelLift, halfWidth)
	assertClose(t, name+" rel ci low", *got.RelCILow, ref.RelCILow, halfWidth)
	assertClose(t, name+" rel ci high", *got.RelCIHigh, ref.RelCIHigh, halfWidth)
}

func TestMannWhitneyMatchesR(t *testing.T) {
	f := reference(t)
	withShift := 0
	for _, ref := range f.MannWhitney {
		name, got := compareReference(t, f, MannWhitney, ref, Options{})
		assertClose(t, name+" W", got.Statistic, ref.Statistic, 1)
		assertP(t, name+" p", got.PValue, ref.PValue)
		if ref.Effect == nil { // R could not afford all pairwise differences
			continue
		}
		withShift++
		// the shift and its CI are order statistics of x - y: exact
		assertClose(t, name+" HL shift", got.Effect, *ref.Effect, 0)
		assertClose(t, name+" HL ci low", got.CILow, ref.CILow, 0)
		assertClose(t, name+" HL ci high", got.CIHigh, ref.CIHigh, 0)
	}
	if withShift < len(f.MannWhitney)/2 {
		t.Errorf("only %d of %d cases check the Hodges–Lehmann shift", withShift, len(f.MannWhitney))
	}
}

func TestZTestMatchesR(t *testing.T) {
	for _, ref := range reference(t).ZTest {
		name := fmt.Sprintf("%v/%v vs %v/%v", ref.OnesControl, ref.NControl, ref.OnesTreatment, ref.NTreatment)
		got, err := Compare(ZTest, proportions(ref.OnesControl, ref.NControl), proportions(ref.OnesTreatment, ref.NTreatment), Options{Alpha: ref.Alpha})
		if err != nil || got.Undefined != "" {
			t.Fatalf("%s: err %v, undefined %q", name, err, got.Undefined)
		}
		// prop.test reports X-squared = z²; the sign of z is the sign of the effect
		assertClose(t, name+" z²", got.Statistic*got.Statistic, ref.XSquared, 1e-6)
		if math.Signbit(got.Statistic) != math.Signbit(ref.Effect) && ref.Effect != 0 {
			t.Errorf("%s: z = %v has the wrong sign for effect %v", name, got.Statistic, ref.Effect)
		}
		assertP(t, name+" p", got.PValue, ref.PValue)
		width := ref.CIHigh - ref.CILow
		assertClose(t, name+" effect", got.Effect, ref.Effect, width)
		assertClose(t, name+" ci low", got.CILow, ref.CILow, width)
		assertClose(t, name+" ci high", got.CIHigh, ref.CIHigh, width)
	}
}

// proportions is n users of whom the first ones converted.
func proportions(ones, n float64) []float64 {
	xs := make([]float64, int(n))
	for i := range int(ones) {
		xs[i] = 1
	}
	return xs
}
