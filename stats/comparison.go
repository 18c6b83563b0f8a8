package stats

import (
	"fmt"
	"math"
)

// Comparison is the outcome of one test of treatment against control: what a
// MetricResult needs for one (metric, treatment arm). Every float is finite.
type Comparison struct {
	Test      string  // the Method that produced it
	Statistic float64 // t, z, Mann–Whitney W, or the observed mean difference (resampling)
	PValue    float64 // two-sided

	// Effect is treatment minus control: the difference in means, except for
	// mann_whitney where it is the Hodges–Lehmann shift. CI at 1 - alpha.
	Effect, CILow, CIHigh float64

	// Relative lift (treatment mean / control mean - 1) with a delta-method
	// CI; nil with RelUndefinedReason when it cannot be computed.
	RelLift, RelCILow, RelCIHigh *float64
	RelUndefinedReason           string

	// SE and RelSE are the standard errors of Effect and RelLift behind the
	// analytic intervals; 0 for rank and resampling tests.
	SE, RelSE float64

	// AlwaysValid is the sequential (always-valid) form of the interval and
	// p-value; nil for tests that have none (rank and resampling tests).
	AlwaysValid *AlwaysValid

	// CUPED is set when the comparison ran on CUPED-adjusted values.
	CUPED *CUPEDSummary

	DrawsUsed            int // resampling draws actually used; 0 for analytic tests
	NControl, NTreatment int

	// Undefined is non-empty when the test cannot be computed; the numeric
	// fields are then 0.
	Undefined string
}

// Compare runs method m on per-user values of control and treatment
// (proportions as 0/1). Invalid input (NaN, ±Inf, non-0/1 values for z_test,
// bad options) is an error; input that is valid but carries too little
// information gives a Comparison with Undefined set.
func Compare(m Method, control, treatment []float64, opt Options) (Comparison, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Comparison{}, err
	}
	test, ok := tests[m]
	if !ok {
		return Comparison{}, fmt.Errorf("stats: unknown method %q", m)
	}
	if err := validateArm("control", control, m); err != nil {
		return Comparison{}, err
	}
	if err := validateArm("treatment", treatment, m); err != nil {
		return Comparison{}, err
	}
	c, t := momentsOf(control), momentsOf(treatment)
	out := Comparison{Test: string(m), NControl: c.n, NTreatment: t.n}
	if reason := uninformative(c, t); reason != "" {
		return out.undefined(reason), nil
	}
	test(&out, arms{control: control, treatment: treatment, c: c, t: t}, opt)
	if !out.finite() {
		return out.undefined("result is not finite (values too large)"), nil
	}
	if out.Undefined == "" {
		out.setRelativeLift(c, t, opt.Alpha)
		out.setAlwaysValid(opt.NStar, opt.Alpha)
		if m == ZTest && out.AlwaysValid != nil { // a difference of proportions
			out.AlwaysValid.CILow, out.AlwaysValid.CIHigh = max(out.AlwaysValid.CILow, -1), min(out.AlwaysValid.CIHigh, 1)
		}
	}
	return out, nil
}

// arms is a test's input: the values and their moments, taken once.
type arms struct {
	control, treatment []float64
	c, t               moments
}

// testFunc fills the test-specific fields of out; it may set out.Undefined.
type testFunc func(out *Comparison, a arms, opt Options)

var tests = map[Method]testFunc{
	WelchT:      welchT,
	ZTest:       zTest,
	MannWhitney: mannWhitney,
	Permutation: permutationTest,
	Bootstrap:   bootstrapTest,
}

// ValidateValues reports the first NaN or infinite value in xs.
func ValidateValues(xs []float64) error {
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("value %d is %v", i, x)
		}
	}
	return nil
}

func validateArm(arm string, xs []float64, m Method) error {
	if err := ValidateValues(xs); err != nil {
		return fmt.Errorf("stats: %s: %w", arm, err)
	}
	if m != ZTest {
		return nil
	}
	for i, x := range xs {
		if x != 0 && x != 1 {
			return fmt.Errorf("stats: %s: z_test needs 0/1 values, value %d is %v", arm, i, x)
		}
	}
	return nil
}

// uninformative explains why no test can be computed on these arms, or "".
func uninformative(c, t moments) string {
	if c.n < 2 || t.n < 2 {
		return fmt.Sprintf("each arm needs at least 2 values (control %d, treatment %d)", c.n, t.n)
	}
	if c.m2 == 0 && t.m2 == 0 {
		return "zero variance in both arms"
	}
	return ""
}

// undefined clears every numeric result and records why.
func (c Comparison) undefined(reason string) Comparison {
	return Comparison{
		Test: c.Test, NControl: c.NControl, NTreatment: c.NTreatment,
		Undefined: reason, RelUndefinedReason: reason,
	}
}

func (c Comparison) finite() bool {
	for _, v := range []float64{c.Statistic, c.PValue, c.Effect, c.CILow, c.CIHigh} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}
