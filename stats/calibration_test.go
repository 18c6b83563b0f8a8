package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A/A calibration: arms drawn from one distribution, so the test should
// reject at rate alpha and the effect CI should cover the true effect 0 at
// rate 1 - alpha. 2,000 runs give a binomial SD of 0.005 on each rate.

type armSampler func(r *rand.Rand, n int) []float64

type calibration struct {
	runs                      int
	nControl, nTreatment      int
	control, treatment        armSampler
	opt                       Options
	rejectLow, rejectHigh     float64
	coverageLow, coverageHigh float64
}

func normalArm(mean, sd float64) armSampler {
	return func(r *rand.Rand, n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = mean + sd*r.NormFloat64()
		}
		return xs
	}
}

func exponentialArm(r *rand.Rand, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = r.ExpFloat64()
	}
	return xs
}

func bernoulliArm(p float64) armSampler {
	return func(r *rand.Rand, n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			if r.Float64() < p {
				xs[i] = 1
			}
		}
		return xs
	}
}

func (c calibration) run(t *testing.T, m Method) {
	t.Helper()
	r := rand.New(rand.NewPCG(2024, uint64(len(m))))
	rejected, covered := 0, 0
	for run := range c.runs {
		opt := c.opt
		opt.Seed = uint64(run)
		got, err := Compare(m, c.control(r, c.nControl), c.treatment(r, c.nTreatment), opt)
		if err != nil || got.Undefined != "" {
			t.Fatalf("run %d: err %v, undefined %q", run, err, got.Undefined)
		}
		if got.PValue < 0.05 {
			rejected++
		}
		if got.CILow <= 0 && 0 <= got.CIHigh {
			covered++
		}
	}
	reject, coverage := float64(rejected)/float64(c.runs), float64(covered)/float64(c.runs)
	t.Logf("%s: false-positive rate %.4f, CI coverage %.4f over %d runs", m, reject, coverage, c.runs)
	if reject < c.rejectLow || reject > c.rejectHigh {
		t.Errorf("%s: false-positive rate %.4f outside [%v, %v]", m, reject, c.rejectLow, c.rejectHigh)
	}
	if coverage < c.coverageLow || coverage > c.coverageHigh {
		t.Errorf("%s: CI coverage %.4f outside [%v, %v]", m, coverage, c.coverageLow, c.coverageHigh)
	}
}

func analyticCalibration(nControl, nTreatment int, control, treatment armSampler) calibration {
	return calibration{runs: 2000, nControl: nControl, nTreatment: nTreatment, control: control, treatment: treatment,
		rejectLow: 0.04, rejectHigh: 0.06, coverageLow: 0.94, coverageHigh: 0.96}
}

// resamplingCalibration runs fewer experiments (each costs draws × n), so
// its bounds are wider: 1,000 runs give a binomial SD of 0.007. The percentile
// bootstrap is known to under-cover slightly at small n.
func resamplingCalibration() calibration {
	return calibration{runs: 1000, nControl: 40, nTreatment: 40, control: normalArm(5, 2), treatment: normalArm(5, 2),
		opt: Options{MaxDraws: 999}, rejectLow: 0.03, rejectHigh: 0.07, coverageLow: 0.92, coverageHigh: 0.975}
}

func TestCalibrationWelch(t *testing.T) {
	// unequal sizes and variances: where Welch's df matter
	analyticCalibration(40, 70, normalArm(10, 1), normalArm(10, 3)).run(t, WelchT)
}

func TestCalibrationZTest(t *testing.T) {
	analyticCalibration(500, 400, bernoulliArm(0.2), bernoulliArm(0.2)).run(t, ZTest)
}

func TestCalibrationMannWhitney(t *testing.T) {
	analyticCalibration(60, 80, exponentialArm, exponentialArm).run(t, MannWhitney)
}

func TestCalibrationPermutation(t *testing.T) {
	resamplingCalibration().run(t, Permutation)
}

func TestCalibrationBootstrap(t *testing.T) {
	resamplingCalibration().run(t, Bootstrap)
}

// TestCalibrationRelativeLift checks the delta-method CI of the relative
// lift covers the true lift 0 at the nominal rate.
func TestCalibrationRelativeLift(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	control, treatment := normalArm(10, 3), normalArm(10, 3)
	const runs = 2000
	covered := 0
	for range runs {
		got, err := Compare(WelchT, control(r, 200), treatment(r, 200), Options{})
		if err != nil || got.RelLift == nil {
			t.Fatalf("err %v, relative lift undefined: %s", err, got.RelUndefinedReason)
		}
		if *got.RelCILow <= 0 && 0 <= *got.RelCIHigh {
			covered++
		}
	}
	coverage := float64(covered) / runs
	if math.Abs(coverage-0.95) > 0.01 {
		t.Errorf("relative lift CI coverage %.4f outside [0.94, 0.96]", coverage)
	}
}
