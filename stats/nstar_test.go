package stats

import (
	"math/rand/v2"
	"testing"
)

// TestNStarTunedToExpectedUsers is issue 30's simulation of the
// expected_users default: small experiments (20 new normal users per arm
// per day, read every day for 10 days: 400 users in all) with N* = 400,
// the users the team expects, against N* = DefaultNStar (5,000).
//
//   - A/A, 2,000 experiments: with N* = 400 at most 6 % ever show an
//     always-valid p < 0.05 (any look), and the always-valid CI covers 0
//     on every look in at least 94 %.
//   - A true effect of 0.25 SD, 2,000 experiments: detected (any look)
//     at least 20 points more often with N* = 400 than with N* = 5,000, on
//     the same data: tuning to the expected size gains power where the
//     default sequence is tuned for ten times the users.
func TestNStarTunedToExpectedUsers(t *testing.T) {
	const runs, days, perDay = 2000, 10, 20
	const expected = 2 * days * perDay
	r := rand.New(rand.NewPCG(30, 2026))
	control, treatment := make([]float64, days*perDay), make([]float64, days*perDay)
	read := func(shift float64) (tunedHit, defaultHit, covered bool) {
		for i := range control {
			control[i], treatment[i] = r.NormFloat64(), shift+r.NormFloat64()
		}
		covered = true
		for day := 1; day <= days; day++ {
			n := day * perDay
			tuned, err := Compare(WelchT, control[:n], treatment[:n], Options{NStar: expected})
			if err != nil || tuned.AlwaysValid == nil {
				t.Fatalf("day %d: %v %+v", day, err, tuned)
			}
			def, err := Compare(WelchT, control[:n], treatment[:n], Options{NStar: DefaultNStar})
			if err != nil || def.AlwaysValid == nil {
				t.Fatalf("day %d: %v %+v", day, err, def)
			}
			tunedHit = tunedHit || tuned.AlwaysValid.PValue < 0.05
			defaultHit = defaultHit || def.AlwaysValid.PValue < 0.05
			covered = covered && tuned.AlwaysValid.CILow <= shift && shift <= tuned.AlwaysValid.CIHigh
		}
		return tunedHit, defaultHit, covered
	}
	var aaTuned, aaDefault, aaCover, powTuned, powDefault int
	for range runs {
		tuned, def, covered := read(0)
		aaTuned, aaDefault, aaCover = aaTuned+b2i(tuned), aaDefault+b2i(def), aaCover+b2i(covered)
	}
	for range runs {
		tuned, def, _ := read(0.25)
		powTuned, powDefault = powTuned+b2i(tuned), powDefault+b2i(def)
	}
	rate := func(k int) float64 { return float64(k) / runs }
	t.Logf("A/A any-look p<0.05: N*=%d %.4f, N*=%d %.4f; covered 0 on every look (N*=%d) %.4f", expected, rate(aaTuned), DefaultNStar, rate(aaDefault), expected, rate(aaCover))
	t.Logf("effect 0.25 SD detected (any look): N*=%d %.4f, N*=%d %.4f", expected, rate(powTuned), DefaultNStar, rate(powDefault))
	if rate(aaTuned) > 0.06 {
		t.Errorf("A/A any-look false positives with N* = expected users: %.4f > 0.06", rate(aaTuned))
	}
	if rate(aaCover) < 0.94 {
		t.Errorf("always-valid CI covered 0 on every look in %.4f < 0.94", rate(aaCover))
	}
	if rate(powTuned) < rate(powDefault)+0.2 {
		t.Errorf("power with N* = %d: %.4f, with N* = %d: %.4f; want a gain of at least 0.2", expected, rate(powTuned), DefaultNStar, rate(powDefault))
	}
}
