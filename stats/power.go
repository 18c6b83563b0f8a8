package stats

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"
)

// DefaultPower is the probability of detecting the effect that a power
// computation aims for when PowerDesign.Power is 0.
const DefaultPower = 0.8

// PowerDesign is one treatment-versus-control comparison as a power
// computation sees it (stats/README.md, "Power and duration"). Sample
// sizes passed with it are the two arms' users together.
type PowerDesign struct {
	// SD is the per-user standard deviation of the metric, taken as the
	// same in both arms. Ignored for a proportion.
	SD float64
	// Proportion makes the metric a proportion whose control rate is
	// Baseline, in (0, 1): the fixed-horizon numbers are the
	// two-proportion z-test's (R's power.prop.test), and each arm's
	// variance is its own p(1 - p).
	Proportion bool
	Baseline   float64
	// TreatmentShare is the treatment arm's share of the two arms' users,
	// in (0, 1); 0 means 0.5.
	TreatmentShare float64
	// Alpha is the two-sided level (0: DefaultAlpha); Power the
	// probability of detecting the effect (0: DefaultPower).
	Alpha, Power float64
	// Sequential computes for the always-valid confidence sequence
	// (ConfidenceSequence) tuned at NStar (0: DefaultNStar) read at the
	// given sample size, instead of the fixed-horizon test read once.
	Sequential bool
	NStar      float64
}

// ErrUnreachable is returned when no sample size up to 10^15 users (or no
// effect a proportion can have) reaches the power asked for.
var ErrUnreachable = errors.New("stats: power not reachable")

// maxPowerUsers bounds the sample sizes a power search explores.
const maxPowerUsers = 1e15

func (d PowerDesign) withDefaults() (PowerDesign, error) {
	if d.Alpha == 0 {
		d.Alpha = DefaultAlpha
	}
	if d.Power == 0 {
		d.Power = DefaultPower
	}
	if d.TreatmentShare == 0 {
		d.TreatmentShare = 0.5
	}
	if d.NStar == 0 {
		d.NStar = DefaultNStar
	}
	switch {
	case !(d.Alpha > 0 && d.Alpha < 1):
		return d, fmt.Errorf("stats: power: alpha %v outside (0, 1)", d.Alpha)
	case !(d.Power > 0 && d.Power < 1):
		return d, fmt.Errorf("stats: power: power %v outside (0, 1)", d.Power)
	case !(d.TreatmentShare > 0 && d.TreatmentShare < 1):
		return d, fmt.Errorf("stats: power: treatment share %v outside (0, 1)", d.TreatmentShare)
	case d.Proportion && !(d.Baseline > 0 && d.Baseline < 1):
		return d, fmt.Errorf("stats: power: baseline proportion %v outside (0, 1)", d.Baseline)
	case !d.Proportion && (!(d.SD > 0) || math.IsInf(d.SD, 0)):
		return d, fmt.Errorf("stats: power: standard deviation %v must be positive and finite", d.SD)
	}
	return d, validNStar(d.NStar)
}

// arms splits n users by the treatment share.
func (d PowerDesign) arms(n float64) (nc, nt float64) {
	return n * (1 - d.TreatmentShare), n * d.TreatmentShare
}

// PowerAt is the probability that the comparison, read after n users
// (both arms), detects a true absolute effect (treatment minus control):
//
//   - fixed horizon, a mean: Student's t with n - 2 df and noncentrality
//     effect / (SD·sqrt(1/n_c + 1/n_t)), as R's
//     power.t.test(n = n/2, delta = effect, sd = SD) at equal arms;
//   - fixed horizon, a proportion: Φ((|effect| - z·SE₀) / SE₁), SE₀ under
//     the null's pooled rate, SE₁ under the alternative, as R's
//     power.prop.test(n = n/2, p1 = Baseline, p2 = Baseline + effect);
//   - sequential: Φ((|effect| - h) / SE₁), h the confidence sequence's
//     half-width at n (the chance that the interval read at n excludes 0;
//     it may have excluded it earlier, so this is a lower bound).
//
// Like R (strict = FALSE), the fixed-horizon power leaves out the tail on
// the wrong side of 0.
func PowerAt(d PowerDesign, n, effect float64) (float64, error) {
	d, err := d.withDefaults()
	if err != nil {
		return 0, err
	}
	if !(n > 2) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("stats: power: %v users, want more than 2", n)
	}
	if math.IsNaN(effect) || math.IsInf(effect, 0) {
		return 0, fmt.Errorf("stats: power: effect %v is not finite", effect)
	}
	if d.Proportion {
		if p2 := d.Baseline + effect; !(p2 > 0 && p2 < 1) {
			return 0, fmt.Errorf("stats: power: treatment proportion %v outside (0, 1)", p2)
		}
	}
	return d.power(n, math.Abs(effect)), nil
}

// power is PowerAt on checked inputs and a non-negative effect.
func (d PowerDesign) power(n, effect float64) float64 {
	nc, nt := d.arms(n)
	se1 := d.seAlternative(nc, nt, effect)
	if d.Sequential {
		return normalCDF((effect - csHalfWidth(se1, n, d.NStar, d.Alpha)) / se1)
	}
	if d.Proportion {
		p1, p2 := d.Baseline, d.Baseline+effect
		pbar := (nc*p1 + nt*p2) / n
		se0 := math.Sqrt(pbar * (1 - pbar) * (1/nc + 1/nt))
		return normalCDF((effect - normalQuantile(1-d.Alpha/2)*se0) / se1)
	}
	df := n - 2
	return 1 - noncentralTCDF(studentQuantile(1-d.Alpha/2, df), df, effect/se1)
}

// seAlternative is the standard error of the effect when it is effect.
func (d PowerDesign) seAlternative(nc, nt, effect float64) float64 {
	if d.Proportion {
		p1, p2 := d.Baseline, d.Baseline+effect
		return math.Sqrt(p1*(1-p1)/nc + p2*(1-p2)/nt)
	}
	return d.SD * math.Sqrt(1/nc+1/nt)
}

// MDE is the minimum detectable effect after n users (both arms): the
// smallest absolute effect PowerAt detects with probability d.Power. For
// a proportion it is an increase over Baseline (as power.prop.test's p2 >
// p1); ErrUnreachable when no rate below 1 is detected so often.
func MDE(d PowerDesign, n float64) (float64, error) {
	d, err := d.withDefaults()
	if err != nil {
		return 0, err
	}
	if !(n > 2) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("stats: power: %v users, want more than 2", n)
	}
	hi := 0.0
	if d.Proportion {
		hi = (1 - d.Baseline) * (1 - 1e-12)
		if d.power(n, hi) < d.Power {
			return 0, fmt.Errorf("%w: %v users detect no rate below 1 with power %v", ErrUnreachable, n, d.Power)
		}
	} else {
		nc, nt := d.arms(n)
		hi = d.seAlternative(nc, nt, 0)
		for d.power(n, hi) < d.Power {
			hi *= 2
		}
	}
	return bisect(0, hi, func(e float64) bool { return d.power(n, e) >= d.Power }), nil
}

// UsersForMDE is the number of users (both arms, not rounded) the
// comparison needs to detect an absolute effect mde with probability
// d.Power, at least 4; R's power.t.test and power.prop.test give half of
// it (n per group) at equal arms. ErrUnreachable beyond 10^15 users.
func UsersForMDE(d PowerDesign, mde float64) (float64, error) {
	d, err := d.withDefaults()
	if err != nil {
		return 0, err
	}
	if !(mde > 0) || math.IsInf(mde, 0) {
		return 0, fmt.Errorf("stats: power: minimum detectable effect %v must be positive and finite", mde)
	}
	if d.Proportion && !(d.Baseline+mde < 1) {
		return 0, fmt.Errorf("stats: power: baseline %v plus effect %v is not a proportion", d.Baseline, mde)
	}
	const lo = 4 // two per arm, as power.t.test's search starts
	if d.power(maxPowerUsers, mde) < d.Power {
		return 0, fmt.Errorf("%w: effect %v needs more than %g users", ErrUnreachable, mde, maxPowerUsers)
	}
	if d.power(lo, mde) >= d.Power {
		return lo, nil
	}
	// The power grows with n; search on log n for relative precision.
	logN := bisect(math.Log(lo), math.Log(maxPowerUsers), func(l float64) bool { return d.power(math.Exp(l), mde) >= d.Power })
	return math.Exp(logN), nil
}

// DaysForMDE is how many more days of traffic (usersPerDay new users in
// the two arms) the comparison needs, after the nNow users it has, to
// detect an absolute effect mde with probability d.Power: 0 when it has
// enough already. ErrUnreachable when it needs more and no users arrive.
func DaysForMDE(d PowerDesign, mde, nNow, usersPerDay float64) (float64, error) {
	if !(nNow >= 0) || math.IsInf(nNow, 0) {
		return 0, fmt.Errorf("stats: power: %v users so far, want a non-negative number", nNow)
	}
	if !(usersPerDay >= 0) || math.IsInf(usersPerDay, 0) {
		return 0, fmt.Errorf("stats: power: %v users per day, want a non-negative number", usersPerDay)
	}
	need, err := UsersForMDE(d, mde)
	if err != nil {
		return 0, err
	}
	switch {
	case need <= nNow:
		return 0, nil
	case usersPerDay == 0:
		return 0, fmt.Errorf("%w: %v more users needed and none arrive", ErrUnreachable, need-nNow)
	}
	return (need - nNow) / usersPerDay, nil
}

// bisect returns the smallest x in [lo, hi] with ok(x), for ok monotone
// (false then true) and ok(hi) true, to the last bit.
func bisect(lo, hi float64, ok func(float64) bool) float64 {
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// noncentralTCDF is P(T <= t) for a noncentral t with df degrees of
// freedom and noncentrality ncp: AS 243 (Lenth 1989) with the changes of
// R's pnt (its tolerances, and the normal approximation of Abramowitz &
// Stegun 26.7.10 for df > 4e5 or a large ncp), so power.t.test's numbers
// come out the same.
func noncentralTCDF(t, df, ncp float64) float64 {
	const itrmax, errmax = 1000, 1e-12
	if ncp == 0 {
		return 1 - studentUpper(t, df)
	}
	negdel, tt, del := false, t, ncp
	if t < 0 {
		if ncp > 40 {
			return 0
		}
		negdel, tt, del = true, -t, -ncp
	}
	if df > 4e5 || del*del > 2*math.Ln2*1021 {
		s := 1 / (4 * df)
		p := normalCDF((tt*(1-s) - del) / math.Sqrt(1+tt*tt*2*s))
		if negdel {
			return 1 - p
		}
		return p
	}
	x := t * t / (t*t + df)
	var tnc float64
	if x > 0 {
		lambda := del * del
		p := 0.5 * math.Exp(-0.5*lambda)
		if p == 0 {
			return 0
		}
		q := math.Sqrt(2/math.Pi) * p * del
		s := 0.5 - p
		if s < 1e-7 {
			s = -0.5 * math.Expm1(-0.5*lambda)
		}
		a, b := 0.5, 0.5*df
		rxb := math.Pow(1-x, b)
		lgb, _ := math.Lgamma(b)
		lgb5, _ := math.Lgamma(0.5 + b)
		albeta := 0.5*math.Log(math.Pi) + lgb - lgb5
		xodd := mathext.RegIncBeta(a, b, x)
		godd := 2 * rxb * math.Exp(a*math.Log(x)-albeta)
		tnc = b * x
		xeven := 1 - rxb
		if tnc < 2.220446049250313e-16 {
			xeven = tnc
		}
		geven := tnc * rxb
		tnc = p*xodd + q*xeven
		for it := 1; it <= itrmax; it++ {
			a++
			xodd -= godd
			xeven -= geven
			godd *= x * (a + b - 1) / a
			geven *= x * (a + b - 0.5) / (a + 0.5)
			p *= lambda / float64(2*it)
			q *= lambda / float64(2*it+1)
			tnc += p*xodd + q*xeven
			s -= p
			if s < -1e-10 || (s <= 0 && it > 1) {
				break
			}
			if math.Abs(2*s*(xodd-godd)) < errmax {
				break
			}
		}
	}
	tnc += normalCDF(-del)
	tnc = math.Min(tnc, 1)
	if negdel {
		return 1 - tnc
	}
	return tnc
}

// studentUpper is P(T > t) for a central Student's t.
func studentUpper(t, df float64) float64 {
	p := studentTwoSidedP(t, df) / 2
	if t < 0 {
		return 1 - p
	}
	return p
}
