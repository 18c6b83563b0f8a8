package stats

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// assertUndefined checks a comparison carries a reason and only zero,
// JSON-encodable numbers.
func assertUndefined(t *testing.T, what string, got Comparison, reason string) {
	t.Helper()
	if !strings.Contains(got.Undefined, reason) {
		t.Errorf("%s: Undefined = %q, want it to mention %q", what, got.Undefined, reason)
	}
	if got.Statistic != 0 || got.PValue != 0 || got.Effect != 0 || got.CILow != 0 || got.CIHigh != 0 || got.RelLift != nil {
		t.Errorf("%s: undefined comparison carries numbers: %+v", what, got)
	}
	if _, err := json.Marshal(got); err != nil {
		t.Errorf("%s: not encodable as JSON: %v", what, err)
	}
}

func TestTooFewValuesAreUndefined(t *testing.T) {
	for _, m := range Methods {
		for _, arms := range [][2][]float64{{nil, nil}, {{1}, {0, 1}}, {{0, 1, 1}, {}}} {
			got, err := Compare(m, arms[0], arms[1], Options{})
			if err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			assertUndefined(t, string(m), got, "at least 2 values")
			if got.NControl != len(arms[0]) || got.NTreatment != len(arms[1]) {
				t.Errorf("%s: n = %d/%d, want %d/%d", m, got.NControl, got.NTreatment, len(arms[0]), len(arms[1]))
			}
		}
	}
}

func TestAllEqualValuesAreUndefined(t *testing.T) {
	for _, m := range Methods {
		for _, arms := range [][2][]float64{{{1, 1, 1}, {1, 1}}, {{0, 0}, {1, 1, 1}}} {
			got, err := Compare(m, arms[0], arms[1], Options{})
			if err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			assertUndefined(t, string(m), got, "zero variance in both arms")
		}
	}
}

func TestNonFiniteValuesAreRejected(t *testing.T) {
	for _, m := range Methods {
		for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			if _, err := Compare(m, []float64{0, 1, bad}, []float64{1, 0}, Options{}); err == nil || !strings.Contains(err.Error(), "control") {
				t.Errorf("%s with control value %v: err %v, want an error naming the control arm", m, bad, err)
			}
			if _, err := Compare(m, []float64{0, 1}, []float64{bad, 1, 0}, Options{}); err == nil || !strings.Contains(err.Error(), "treatment") {
				t.Errorf("%s with treatment value %v: err %v, want an error naming the treatment arm", m, bad, err)
			}
		}
	}
}

func TestZTestRejectsNonBinaryValues(t *testing.T) {
	if _, err := Compare(ZTest, []float64{0, 1, 0.5}, []float64{0, 1}, Options{}); err == nil {
		t.Error("z_test accepted 0.5")
	}
}

func TestBadOptionsAreRejected(t *testing.T) {
	for _, opt := range []Options{{Alpha: 1}, {Alpha: -0.1}, {Alpha: math.NaN()}, {MaxDraws: -1}, {MaxWork: -5}} {
		if _, err := Compare(WelchT, []float64{1, 2}, []float64{3, 4}, opt); err == nil {
			t.Errorf("options %+v accepted", opt)
		}
	}
	if _, err := Compare("t_test", []float64{1, 2}, []float64{3, 4}, Options{}); err == nil {
		t.Error("unknown method accepted")
	}
}

func TestControlMeanZeroLeavesRelativeLiftUndefined(t *testing.T) {
	for _, m := range Methods {
		control, treatment := []float64{-1, 1, -2, 2, 0}, []float64{1, 1.5, 3, 2}
		if m == ZTest {
			control, treatment = []float64{0, 0, 0, 0}, []float64{1, 1, 0, 1, 0, 1}
		}
		got, err := Compare(m, control, treatment, Options{MaxDraws: 200})
		if err != nil || got.Undefined != "" {
			t.Fatalf("%s: err %v, undefined %q", m, err, got.Undefined)
		}
		if got.RelLift != nil || got.RelCILow != nil || got.RelCIHigh != nil || got.RelUndefinedReason != "control mean is 0" {
			t.Errorf("%s: relative lift %v, reason %q", m, got.RelLift, got.RelUndefinedReason)
		}
		if _, err := json.Marshal(got); err != nil {
			t.Errorf("%s: not encodable as JSON: %v", m, err)
		}
	}
}

func TestOverflowingValuesAreUndefinedNotInfinite(t *testing.T) {
	got, err := Compare(WelchT, []float64{-1e300, 1e300, 0}, []float64{1e300, -1e300, 5}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	assertUndefined(t, "welch on ±1e300", got, "not finite")
}

func TestOneConstantArmIsDefined(t *testing.T) {
	got, err := Compare(WelchT, []float64{3, 3, 3}, []float64{1, 2, 3, 4}, Options{})
	if err != nil || got.Undefined != "" {
		t.Fatalf("err %v, undefined %q", err, got.Undefined)
	}
	if got.Effect != 2.5-3 || !(got.CILow < got.Effect && got.Effect < got.CIHigh) {
		t.Errorf("effect %v with CI [%v, %v]", got.Effect, got.CILow, got.CIHigh)
	}
}

func TestParseMethod(t *testing.T) {
	for _, m := range Methods {
		got, err := ParseMethod(string(m))
		if err != nil || got != m {
			t.Errorf("ParseMethod(%q) = %q, %v", m, got, err)
		}
	}
	if _, err := ParseMethod("Welch_T"); err == nil {
		t.Error("ParseMethod accepted a wrongly cased name")
	}
}
