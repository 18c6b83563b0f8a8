package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// summaryArm rebuilds an arm's mean and variance (n - 1) from the per-user
// sum and sum of squares the published tests give.
func summaryArm(sum, sumSq float64, n int) (mean, varianceOfMean float64) {
	mean = sum / float64(n)
	v := (sumSq - sum*sum/float64(n)) / float64(n-1)
	return mean, v / float64(n)
}

// TestConfidenceSequenceMatchesPublishedValues reproduces two published
// reference values of the same construction to 1e-5:
//   - GrowthBook, gbstats tests/frequentist/test_tests.py,
//     TestSequentialTTest.test_sequential_test_runs: control sum 1396.87,
//     sum of squares 52377.9767, n 3000; treatment 2422.7, 134698.29, 3461;
//     sequential tuning 1000: relative lift 0.50336, SE 0.33341, always-valid
//     CI (-0.55844, 1.56516), p 1.0;
//   - PostHog's golden value for its sequential frequentist method
//     (treatment 2500/135000/3500, control 1400/52000/3000, N* 1000):
//     relative lift 0.53061, CI (-0.53230, 1.59353).
func TestConfidenceSequenceMatchesPublishedValues(t *testing.T) {
	cases := []struct {
		name                   string
		c, tr                  [3]float64
		lift, se, low, high, p float64
		checkSE, checkP        bool
	}{
		{"GrowthBook test_sequential_test_runs", [3]float64{1396.87, 52377.9767, 3000}, [3]float64{2422.7, 134698.29, 3461},
			0.50336, 0.33341, -0.55844, 1.56516, 1.0, true, true},
		{"PostHog golden value", [3]float64{1400, 52000, 3000}, [3]float64{2500, 135000, 3500},
			0.53061, 0, -0.53230, 1.59353, 0, false, false},
	}
	for _, tc := range cases {
		mc, vc := summaryArm(tc.c[0], tc.c[1], int(tc.c[2]))
		mt, vt := summaryArm(tc.tr[0], tc.tr[1], int(tc.tr[2]))
		var c Comparison
		c.setRelativeLiftOf(mc, mt, vc, vt, 0.05)
		if c.RelLift == nil {
			t.Fatalf("%s: no relative lift", tc.name)
		}
		iv := ConfidenceSequence(*c.RelLift, c.RelSE, int(tc.c[2]+tc.tr[2]), 1000, 0.05)
		check := func(what string, got, want float64) {
			if math.Abs(got-want) > 1e-5 {
				t.Errorf("%s: %s = %.7f, want %.5f", tc.name, what, got, want)
			}
		}
		check("relative lift", *c.RelLift, tc.lift)
		check("ci low", iv.Low, tc.low)
		check("ci high", iv.High, tc.high)
		if tc.checkSE {
			check("se", c.RelSE, tc.se)
		}
		if tc.checkP {
			check("p", iv.P, tc.p)
		}
	}
}

func TestConfidenceSequenceBehaviour(t *testing.T) {
	// Wider than the fixed-horizon interval at every n, and p = 1 when the
	// estimate is 0; a huge z gives p = 0, not NaN.
	for _, n := range []int{10, 1000, 5000, 100000} {
		cs, fixed := ConfidenceSequence(0, 1, n, DefaultNStar, 0.05), NormalInterval(0, 1, 0.05)
		if !(cs.High > fixed.High && cs.Low < fixed.Low) || cs.P != 1 {
			t.Errorf("n=%d: sequence %+v not wider than fixed %+v, or p != 1", n, cs, fixed)
		}
	}
	if iv := ConfidenceSequence(1e200, 1e-200, 1000, DefaultNStar, 0.05); iv.P != 0 {
		t.Errorf("huge z: p = %v, want 0", iv.P)
	}
	// A sequence tuned at N* is tighter there than one tuned far away.
	if a, b := ConfidenceSequence(0, 1, 5000, 5000, 0.05), ConfidenceSequence(0, 1, 5000, 50, 0.05); a.High >= b.High {
		t.Errorf("tuned at 5000: half-width %v, tuned at 50: %v", a.High, b.High)
	}
	if _, err := Compare(WelchT, []float64{1, 2}, []float64{3, 4}, Options{NStar: -1}); err == nil {
		t.Error("negative N* accepted")
	}
}

// TestAATrialsPeekingDaily is the simulation: 2,000 A/A experiments,
// 200 new normal users per arm per day, read every day for 14 days. With
// the always-valid p-value at most 6 % of experiments ever show p < 0.05 and
// the always-valid CI covers 0 on every look in at least 94 %; the same
// reading of the fixed-horizon Welch p-value shows far more (> 15 %), so
// the harness can tell them apart.
func TestAATrialsPeekingDaily(t *testing.T) {
	const runs, days, perDay = 2000, 14, 200
	r := rand.New(rand.NewPCG(12, 2026))
	control, treatment := make([]float64, days*perDay), make([]float64, days*perDay)
	var seqAny, fixedAny, seqCoverAll int
	for range runs {
		for i := range control {
			control[i], treatment[i] = 5+2*r.NormFloat64(), 5+2*r.NormFloat64()
		}
		seqHit, fixedHit, covered := false, false, true
		for day := 1; day <= days; day++ {
			n := day * perDay
			c, err := Compare(WelchT, control[:n], treatment[:n], Options{})
			if err != nil || c.AlwaysValid == nil {
				t.Fatalf("day %d: %v %+v", day, err, c)
			}
			seqHit = seqHit || c.AlwaysValid.PValue < 0.05
			fixedHit = fixedHit || c.PValue < 0.05
			covered = covered && c.AlwaysValid.CILow <= 0 && 0 <= c.AlwaysValid.CIHigh
		}
		seqAny += b2i(seqHit)
		fixedAny += b2i(fixedHit)
		seqCoverAll += b2i(covered)
	}
	seqRate, fixedRate, cover := float64(seqAny)/runs, float64(fixedAny)/runs, float64(seqCoverAll)/runs
	t.Logf("any-look p<0.05: sequential %.4f, fixed horizon %.4f; always-valid CI covers 0 on every look: %.4f", seqRate, fixedRate, cover)
	if seqRate > 0.06 {
		t.Errorf("sequential any-look rejection rate %.4f > 0.06", seqRate)
	}
	if cover < 0.94 {
		t.Errorf("always-valid CI covered 0 on every look in %.4f < 0.94", cover)
	}
	if fixedRate <= 0.15 {
		t.Errorf("fixed-horizon any-look rejection rate %.4f <= 0.15: the harness does not show peeking", fixedRate)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
