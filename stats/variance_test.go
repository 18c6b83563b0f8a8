package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// The vectors in testdata/reference_variance.json come from R
// (testdata/gen_reference.R, second part): CUPED as lm(y ~ x) over both
// arms then t.test on the adjusted values, the ratio of means with the
// delta-method variance, and quantile(type = 7) with Woodruff's
// user-clustered standard error, each written out in R.

type varianceReference struct {
	CUPED []struct {
		Name                                                string
		Alpha, NStar                                        float64
		ControlY, ControlX, TreatmentY, TreatmentX          []float64
		Theta, Effect, SE, Statistic, PValue, CILow, CIHigh float64
		VarianceReduction, SeqCILow, SeqCIHigh, SeqP        float64
	} `json:"cuped"`
	Ratio []struct {
		Alpha                                                   float64
		ControlNum, ControlDen, TreatmentNum, TreatmentDen      []float64
		ControlRatio, TreatmentRatio, Effect, SE, CILow, CIHigh float64
		PValue, RelLift, RelSE                                  float64
	} `json:"ratio"`
	Quantile []struct {
		P, Alpha                                                         float64
		ControlValues, ControlOffsets, TreatmentValues, TreatmentOffsets []float64
		ControlQuantile, TreatmentQuantile, ControlSE, TreatmentSE       float64
		Effect, CILow, CIHigh                                            float64
	} `json:"quantile"`
}

func loadVarianceReference(t *testing.T) varianceReference {
	t.Helper()
	b, err := os.ReadFile("testdata/reference_variance.json")
	if err != nil {
		t.Fatal(err)
	}
	// The generator writes snake_case keys; map them onto the fields.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var ref varianceReference
	for key, dst := range map[string]any{"cuped": &ref.CUPED, "ratio": &ref.Ratio, "quantile": &ref.Quantile} {
		var cases []map[string]json.RawMessage
		if err := json.Unmarshal(raw[key], &cases); err != nil {
			t.Fatal(err)
		}
		items := make([]map[string]json.RawMessage, 0, len(cases))
		for _, it := range cases {
			items = append(items, camel(it))
		}
		again, _ := json.Marshal(items)
		if err := json.Unmarshal(again, dst); err != nil {
			t.Fatal(err)
		}
	}
	if len(ref.CUPED) == 0 || len(ref.Ratio) == 0 || len(ref.Quantile) == 0 {
		t.Fatal("reference_variance.json is missing cases")
	}
	return ref
}

// camel turns snake_case keys into the field names encoding/json matches
// case-insensitively (control_y -> controly).
func camel(m map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		key := make([]byte, 0, len(k))
		for i := 0; i < len(k); i++ {
			if k[i] != '_' {
				key = append(key, k[i])
			}
		}
		out[string(key)] = v
	}
	return out
}

func offsets(fs []float64) []int {
	out := make([]int, len(fs))
	for i, f := range fs {
		out[i] = int(f)
	}
	return out
}

func TestCUPEDMatchesR(t *testing.T) {
	for _, c := range loadVarianceReference(t).CUPED {
		got, err := CompareCUPED(WelchT, c.ControlY, c.ControlX, c.TreatmentY, c.TreatmentX, Options{Alpha: c.Alpha, NStar: c.NStar})
		if err != nil || got.CUPED == nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		assertClose(t, c.Name+" theta", got.CUPED.Theta, c.Theta, 1e-12)
		if got.Undefined != "" {
			t.Errorf("%s: undefined: %s", c.Name, got.Undefined)
			continue
		}
		assertClose(t, c.Name+" effect", got.Effect, c.Effect, c.SE)
		assertClose(t, c.Name+" se", got.SE, c.SE, 0)
		assertClose(t, c.Name+" t", got.Statistic, c.Statistic, 1e-3)
		assertP(t, c.Name+" p", got.PValue, c.PValue)
		assertClose(t, c.Name+" ci low", got.CILow, c.CILow, c.SE)
		assertClose(t, c.Name+" ci high", got.CIHigh, c.CIHigh, c.SE)
		assertClose(t, c.Name+" variance reduction", got.CUPED.VarianceReduction, c.VarianceReduction, 1e-6)
		assertClose(t, c.Name+" sequential low", got.AlwaysValid.CILow, c.SeqCILow, c.SE)
		assertClose(t, c.Name+" sequential high", got.AlwaysValid.CIHigh, c.SeqCIHigh, c.SE)
		assertP(t, c.Name+" sequential p", got.AlwaysValid.PValue, c.SeqP)
	}
}

// TestCUPEDThetaIssueExample: pre = [0.3, 0.5, 0.9, 22], post = [2, 1, 5, 3]
// in both arms gives theta 0.01864 (to 1e-5).
func TestCUPEDThetaIssueExample(t *testing.T) {
	pre, post := []float64{0.3, 0.5, 0.9, 22}, []float64{2, 1, 5, 3}
	got, err := CompareCUPED(WelchT, post, pre, post, pre, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.CUPED.Theta-0.01864) > 1e-5 {
		t.Errorf("theta = %.7f, want 0.01864", got.CUPED.Theta)
	}
}

func TestCUPEDRejectsBadInput(t *testing.T) {
	y, x := []float64{1, 2, 3}, []float64{1, 2, 3}
	for name, call := range map[string]func() error{
		"rank test":       func() error { _, err := CompareCUPED(MannWhitney, y, x, y, x, Options{}); return err },
		"length mismatch": func() error { _, err := CompareCUPED(WelchT, y, x[:2], y, x, Options{}); return err },
		"NaN covariate": func() error {
			_, err := CompareCUPED(WelchT, y, []float64{1, math.NaN(), 3}, y, x, Options{})
			return err
		},
		"z_test non 0/1": func() error { _, err := CompareCUPED(ZTest, y, x, y, x, Options{}); return err },
	} {
		if call() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// No covariate information (everyone x = 0): no adjustment, the plain test.
	zero := []float64{0, 0, 0}
	got, err := CompareCUPED(WelchT, y, zero, []float64{2, 4, 7}, zero, Options{})
	plain, _ := Compare(WelchT, y, []float64{2, 4, 7}, Options{})
	if err != nil || got.CUPED != nil || got.Effect != plain.Effect || got.PValue != plain.PValue {
		t.Errorf("x = 0 everywhere: %+v (%v), want the plain Welch %+v", got, err, plain)
	}
}

func TestRatioMatchesR(t *testing.T) {
	for i, c := range loadVarianceReference(t).Ratio {
		got, err := CompareRatio(RatioArm{Num: c.ControlNum, Den: c.ControlDen}, RatioArm{Num: c.TreatmentNum, Den: c.TreatmentDen}, Options{Alpha: c.Alpha})
		if err != nil || got.Undefined != "" {
			t.Fatalf("case %d: %v %s", i, err, got.Undefined)
		}
		name := "ratio case " + string(rune('A'+i))
		assertClose(t, name+" effect", got.Effect, c.Effect, c.SE)
		assertClose(t, name+" se", got.SE, c.SE, 0)
		assertClose(t, name+" ci low", got.CILow, c.CILow, c.SE)
		assertClose(t, name+" ci high", got.CIHigh, c.CIHigh, c.SE)
		assertP(t, name+" p", got.PValue, c.PValue)
		assertClose(t, name+" rel lift", *got.RelLift, c.RelLift, c.RelSE)
		assertClose(t, name+" rel se", got.RelSE, c.RelSE, 0)
	}
}

func TestQuantileMatchesR(t *testing.T) {
	for i, c := range loadVarianceReference(t).Quantile {
		ctl := Calls{Values: c.ControlValues, Offsets: offsets(c.ControlOffsets)}
		trt := Calls{Values: c.TreatmentValues, Offsets: offsets(c.TreatmentOffsets)}
		got, err := CompareQuantile(ctl, trt, c.P, Options{Alpha: c.Alpha})
		if err != nil {
			t.Fatal(err)
		}
		name := "quantile case " + string(rune('A'+i))
		se := math.Hypot(c.ControlSE, c.TreatmentSE)
		if se == 0 {
			if got.Undefined == "" {
				t.Errorf("%s: R has zero SE, got %+v", name, got)
			}
			continue
		}
		assertClose(t, name+" effect", got.Effect, c.Effect, se)
		assertClose(t, name+" se", got.SE, se, 0)
		assertClose(t, name+" ci low", got.CILow, c.CILow, se)
		assertClose(t, name+" ci high", got.CIHigh, c.CIHigh, se)
		if got.NControl != len(ctl.Offsets)-1 {
			t.Errorf("%s: n control %d", name, got.NControl)
		}
	}
}

func TestQuantileAndRatioRejectBadInput(t *testing.T) {
	ok := Calls{Values: []float64{1, 2, 3}, Offsets: []int{0, 1, 3}}
	bad := map[string]func() error{
		"p = 0": func() error { _, err := CompareQuantile(ok, ok, 0, Options{}); return err },
		"p = 1": func() error { _, err := CompareQuantile(ok, ok, 1, Options{}); return err },
		"offsets short": func() error {
			_, err := CompareQuantile(Calls{Values: []float64{1, 2}, Offsets: []int{0, 1}}, ok, 0.5, Options{})
			return err
		},
		"offsets decrease": func() error {
			_, err := CompareQuantile(Calls{Values: []float64{1, 2}, Offsets: []int{0, 2, 1, 2}}, ok, 0.5, Options{})
			return err
		},
		"NaN call": func() error {
			_, err := CompareQuantile(Calls{Values: []float64{math.NaN()}, Offsets: []int{0, 1}}, ok, 0.5, Options{})
			return err
		},
		"ratio lengths": func() error {
			_, err := CompareRatio(RatioArm{Num: []float64{1}, Den: nil}, RatioArm{}, Options{})
			return err
		},
		"ratio Inf": func() error {
			_, err := CompareRatio(RatioArm{Num: []float64{math.Inf(1)}, Den: []float64{1}}, RatioArm{}, Options{})
			return err
		},
	}
	for name, call := range bad {
		if call() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Too thin or degenerate: undefined, not an error.
	thin, err := CompareQuantile(Calls{Values: []float64{1}, Offsets: []int{0, 1}}, ok, 0.5, Options{})
	if err != nil || thin.Undefined == "" {
		t.Errorf("one call: %+v %v", thin, err)
	}
	zeroDen, err := CompareRatio(RatioArm{Num: []float64{0, 0}, Den: []float64{0, 0}}, RatioArm{Num: []float64{1, 2}, Den: []float64{1, 1}}, Options{})
	if err != nil || zeroDen.Undefined == "" {
		t.Errorf("denominator 0: %+v %v", zeroDen, err)
	}
}

// clusteredArm draws users with 1 + Poisson(3) calls each; a user's calls
// share a random level (the clustering a per-call method would ignore),
// and latencies are log-normal.
func clusteredArm(r *rand.Rand, users int) (Calls, RatioArm) {
	calls := Calls{Offsets: make([]int, 1, users+1)}
	ratio := RatioArm{Num: make([]float64, users), Den: make([]float64, users)}
	for u := range users {
		k := 1 + poisson(r, 3)
		level := 0.4 * r.NormFloat64()
		for range k {
			v := math.Exp(6.7 + level + 0.5*r.NormFloat64())
			calls.Values = append(calls.Values, v)
			ratio.Num[u] += v
		}
		ratio.Den[u] = float64(k)
		calls.Offsets = append(calls.Offsets, len(calls.Values))
	}
	return calls, ratio
}

func poisson(r *rand.Rand, mean float64) int {
	limit, k, p := math.Exp(-mean), 0, r.Float64()
	for p > limit {
		k++
		p *= r.Float64()
	}
	return k
}

// TestQuantileAndRatioCoverageAA: in 2,000 A/A experiments with clustered
// calls, the 95 % CIs of the p95 difference and of the latency-per-call
// ratio difference cover the true 0 at a rate in [0.93, 0.97]. A per-call
// interval that ignored the clustering would cover visibly less.
func TestQuantileAndRatioCoverageAA(t *testing.T) {
	const runs, users = 2000, 400
	r := rand.New(rand.NewPCG(12, 95))
	var qCover, rCover, qSeqCover int
	for range runs {
		cq, cr := clusteredArm(r, users)
		tq, tr := clusteredArm(r, users)
		q, err := CompareQuantile(cq, tq, 0.95, Options{})
		if err != nil || q.Undefined != "" {
			t.Fatalf("quantile: %v %s", err, q.Undefined)
		}
		ra, err := CompareRatio(cr, tr, Options{})
		if err != nil || ra.Undefined != "" {
			t.Fatalf("ratio: %v %s", err, ra.Undefined)
		}
		qCover += b2i(q.CILow <= 0 && 0 <= q.CIHigh)
		qSeqCover += b2i(q.AlwaysValid.CILow <= 0 && 0 <= q.AlwaysValid.CIHigh)
		rCover += b2i(ra.CILow <= 0 && 0 <= ra.CIHigh)
	}
	qc, rc := float64(qCover)/runs, float64(rCover)/runs
	t.Logf("A/A coverage: p95 difference %.4f (always-valid %.4f), ratio difference %.4f", qc, float64(qSeqCover)/runs, rc)
	for name, c := range map[string]float64{"quantile": qc, "ratio": rc} {
		if c < 0.93 || c > 0.97 {
			t.Errorf("%s CI coverage %.4f outside [0.93, 0.97]", name, c)
		}
	}
}

func TestNonInferiority(t *testing.T) {
	// Quality: higher is better. Effect -0.01 ± 0.005 against a 0.02 margin
	// is non-inferior; -0.05 ± 0.005 is inferior; -0.02 ± 0.01 inconclusive.
	mk := func(d, se float64) Comparison {
		c := Comparison{NControl: 1000, NTreatment: 1000}
		c.fillNormal(1, 1+d, se*se/2, se*se/2, Options{Alpha: 0.05, NStar: DefaultNStar})
		return c
	}
	cases := []struct {
		name       string
		c          Comparison
		m          Margin
		sequential bool
		want       string
	}{
		{"close, fixed", mk(-0.01, 0.004), Margin{Value: 0.02}, false, NonInferior},
		{"far below, fixed", mk(-0.05, 0.004), Margin{Value: 0.02}, false, Inferior},
		{"straddles, fixed", mk(-0.02, 0.01), Margin{Value: 0.02}, false, Inconclusive},
		{"higher is worse: +0.01", mk(0.01, 0.004), Margin{Value: 0.02, BadIsIncrease: true}, false, NonInferior},
		{"higher is worse: +0.05", mk(0.05, 0.004), Margin{Value: 0.02, BadIsIncrease: true}, false, Inferior},
		{"relative -1 % vs 2 %", mk(-0.01, 0.004), Margin{Value: 0.02, Relative: true}, false, NonInferior},
		// The sequential interval is wider: the same data can be inconclusive.
		{"close, sequential", mk(-0.01, 0.006), Margin{Value: 0.02}, true, Inconclusive},
	}
	for _, tc := range cases {
		res, ok, err := NonInferiority(tc.c, tc.m, tc.sequential, Options{})
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", tc.name, ok, err)
		}
		if res.Decision != tc.want {
			t.Errorf("%s: decision %s, want %s (p %v)", tc.name, res.Decision, tc.want, res.PValue)
		}
		if (res.PValue < 0.05) != (res.Decision == NonInferior) {
			t.Errorf("%s: p %v disagrees with decision %s", tc.name, res.PValue, res.Decision)
		}
	}
	if _, _, err := NonInferiority(mk(0, 1), Margin{Value: 0}, false, Options{}); err == nil {
		t.Error("zero margin accepted")
	}
	if _, ok, _ := NonInferiority(Comparison{Undefined: "thin"}, Margin{Value: 1}, false, Options{}); ok {
		t.Error("undefined comparison gave a decision")
	}
}
