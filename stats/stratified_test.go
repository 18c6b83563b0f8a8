package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// reference_stratified.json (gen_reference.R, fourth part).
type stratifiedReference struct {
	Stratified []struct {
		Strata []struct {
			Control, Treatment []float64
		}
		Effect, SE, DF, Statistic float64
		PValue                    float64 `json:"p_value"`
		CILow                     float64 `json:"ci_low"`
		CIHigh                    float64 `json:"ci_high"`
		RelLift                   float64 `json:"rel_lift"`
		RelCILow                  float64 `json:"rel_ci_low"`
		RelCIHigh                 float64 `json:"rel_ci_high"`
		AVCILow                   float64 `json:"av_ci_low"`
		AVCIHigh                  float64 `json:"av_ci_high"`
	}
}

func TestStratifiedMatchesR(t *testing.T) {
	b, err := os.ReadFile("testdata/reference_stratified.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref stratifiedReference
	if err := json.Unmarshal(b, &ref); err != nil || len(ref.Stratified) == 0 {
		t.Fatalf("read reference: %v", err)
	}
	for i, c := range ref.Stratified {
		strata := make([]Stratum, len(c.Strata))
		for k, s := range c.Strata {
			strata[k] = Stratum{Control: s.Control, Treatment: s.Treatment}
		}
		got, err := CompareStratified(WelchT, strata, Options{})
		if err != nil || got.Undefined != "" || got.RelLift == nil || got.AlwaysValid == nil {
			t.Fatalf("case %d: %+v, %v", i, got, err)
		}
		for _, x := range []struct {
			what           string
			got, want, tol float64
		}{
			{"effect", got.Effect, c.Effect, c.SE}, {"se", got.SE, c.SE, 0}, {"statistic", got.Statistic, c.Statistic, 1e-3},
			{"p", got.PValue, c.PValue, 1e-300}, {"ci low", got.CILow, c.CILow, c.SE}, {"ci high", got.CIHigh, c.CIHigh, c.SE},
			{"lift", *got.RelLift, c.RelLift, got.RelSE}, {"lift low", *got.RelCILow, c.RelCILow, got.RelSE}, {"lift high", *got.RelCIHigh, c.RelCIHigh, got.RelSE},
			{"always-valid low", got.AlwaysValid.CILow, c.AVCILow, c.SE}, {"always-valid high", got.AlwaysValid.CIHigh, c.AVCIHigh, c.SE},
		} {
			if math.Abs(x.got-x.want) > 1e-9*math.Max(math.Abs(x.want), x.tol) {
				t.Errorf("case %d (%d strata) %s = %.17g, want %.17g", i, len(strata), x.what, x.got, x.want)
			}
		}
	}
}

// With one stratum the stratified comparison is Welch's test.
func TestStratifiedWithOneStratumIsWelch(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	c, tr := make([]float64, 300), make([]float64, 500)
	for i := range c {
		c[i] = r.NormFloat64()
	}
	for i := range tr {
		tr[i] = 0.2 + 1.5*r.NormFloat64()
	}
	got, err := CompareStratified(WelchT, []Stratum{{Control: c, Treatment: tr}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Compare(WelchT, c, tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range [][2]float64{{got.Effect, want.Effect}, {got.PValue, want.PValue}, {got.CILow, want.CILow}, {got.CIHigh, want.CIHigh},
		{*got.RelLift, *want.RelLift}, {*got.RelCILow, *want.RelCILow}, {got.AlwaysValid.CILow, want.AlwaysValid.CILow}} {
		if math.Abs(x[0]-x[1]) > 1e-12*math.Max(1, math.Abs(x[1])) {
			t.Errorf("one stratum %v, Welch %v", x[0], x[1])
		}
	}
}

// With one stratum and covariates it is CompareCUPED.
func TestStratifiedCUPEDWithOneStratumIsCUPED(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	gen := func(n int, shift float64) (y, x []float64) {
		for range n {
			xi := r.NormFloat64()
			x, y = append(x, xi), append(y, shift+0.8*xi+0.5*r.NormFloat64())
		}
		return y, x
	}
	yc, xc := gen(400, 0)
	yt, xt := gen(300, 0.1)
	got, err := CompareStratified(WelchT, []Stratum{{Control: yc, Treatment: yt, ControlPre: xc, TreatmentPre: xt}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := CompareCUPED(WelchT, yc, xc, yt, xt, Options{})
	if err != nil || got.CUPED == nil || want.CUPED == nil {
		t.Fatalf("%+v %+v %v", got.CUPED, want.CUPED, err)
	}
	for _, x := range [][2]float64{{got.Effect, want.Effect}, {got.PValue, want.PValue}, {got.CILow, want.CILow},
		{got.CUPED.Theta, want.CUPED.Theta}, {got.CUPED.VarianceReduction, want.CUPED.VarianceReduction}} {
		if math.Abs(x[0]-x[1]) > 1e-10*math.Max(1, math.Abs(x[1])) {
			t.Errorf("stratified CUPED %v, CUPED %v", x[0], x[1])
		}
	}
}

// A/A with a weight change mid-experiment (50/50 for 7 days, then 20/80)
// and a trend in the outcome (its mean grows 0.1 a day): read daily, the
// stratified estimator's always-valid p stays under the bounds; the
// pooled estimator on the same data is biased (treatment has more of the
// later, higher users) and shows it.
func TestStratifiedAAUnderARampAndATrend(t *testing.T) {
	const experiments, days, perDay = 1000, 14, 200
	r := rand.New(rand.NewPCG(20261127, 30))
	var strFP, strMiss, pooledFP int
	for range experiments {
		strata := make([]Stratum, 2)
		var pooledC, pooledT []float64
		rejected, missed, pooledRejected := false, false, false
		for day := range days {
			phase, share := 0, 0.5
			if day >= 7 {
				phase, share = 1, 0.2
			}
			for range perDay {
				y := 0.1*float64(day) + r.NormFloat64()
				if r.Float64() < share {
					strata[phase].Control = append(strata[phase].Control, y)
					pooledC = append(pooledC, y)
				} else {
					strata[phase].Treatment = append(strata[phase].Treatment, y)
					pooledT = append(pooledT, y)
				}
			}
			opt := Options{NStar: days * perDay}
			s, err := CompareStratified(WelchT, strata, opt)
			if err != nil || s.AlwaysValid == nil {
				t.Fatalf("stratified: %+v %v", s, err)
			}
			rejected = rejected || s.AlwaysValid.PValue < 0.05
			missed = missed || s.AlwaysValid.CILow > 0 || s.AlwaysValid.CIHigh < 0
			p, err := Compare(WelchT, pooledC, pooledT, opt)
			if err != nil {
				t.Fatal(err)
			}
			pooledRejected = pooledRejected || p.AlwaysValid.PValue < 0.05
		}
		if rejected {
			strFP++
		}
		if missed {
			strMiss++
		}
		if pooledRejected {
			pooledFP++
		}
	}
	fp, coverage, pooled := float64(strFP)/experiments, 1-float64(strMiss)/experiments, float64(pooledFP)/experiments
	t.Logf("stratified: any-look false positives %.4f, always-valid coverage %.4f; pooled: any-look false positives %.4f", fp, coverage, pooled)
	if fp > 0.06 || coverage < 0.94 {
		t.Errorf("stratified any-look false positives %.4f (bound 0.06), coverage %.4f (bound 0.94)", fp, coverage)
	}
	if pooled < 0.5 {
		t.Errorf("pooled any-look false positives %.4f: the simulation no longer shows the pooled bias", pooled)
	}
}
