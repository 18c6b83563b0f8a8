package stats

import (
	"fmt"
	"math"
	"slices"
)

// Calls is one arm of a quantile metric: every call's value, grouped by
// user. User i's calls are Values[Offsets[i]:Offsets[i+1]], so
// len(Offsets) is the number of users plus one.
type Calls struct {
	Values  []float64
	Offsets []int
}

// Users is the number of users in the arm.
func (c Calls) Users() int { return max(len(c.Offsets)-1, 0) }

func (c Calls) validate(arm string) error {
	if len(c.Offsets) == 0 {
		if len(c.Values) == 0 {
			return nil
		}
		return fmt.Errorf("stats: %s: %d values without user offsets", arm, len(c.Values))
	}
	if c.Offsets[0] != 0 || c.Offsets[len(c.Offsets)-1] != len(c.Values) {
		return fmt.Errorf("stats: %s: offsets must run from 0 to %d", arm, len(c.Values))
	}
	for i := 1; i < len(c.Offsets); i++ {
		if c.Offsets[i] < c.Offsets[i-1] {
			return fmt.Errorf("stats: %s: offsets decrease at user %d", arm, i-1)
		}
	}
	if err := ValidateValues(c.Values); err != nil {
		return fmt.Errorf("stats: %s: %w", arm, err)
	}
	return nil
}

// quantileEstimate is an arm's per-call quantile and its variance.
type quantileEstimate struct {
	users    int
	q        float64
	variance float64
}

// estimate computes the type-7 quantile at p of all calls and its
// user-clustered variance by Woodruff's method: the share of calls at or
// below the estimate, p̂ = Σa_i / Σc_i over users (a_i of user i's c_i
// calls are ≤ q̂), is a ratio of user-level sums whose variance the delta
// method gives with the clustering included,
// Var(p̂) ≈ Var_i(a_i - p̂·c_i) / (n·mean(c)²);
// the quantiles at p ± z·sd(p̂) bound the quantile's interval, and its
// standard error is their distance over 2z. sorted is scratch space of
// len(Values).
func (c Calls) estimate(p, z float64, sorted []float64) quantileEstimate {
	n := c.Users()
	out := quantileEstimate{users: n}
	if len(c.Values) < 2 || n < 2 {
		return out
	}
	copy(sorted, c.Values)
	slices.Sort(sorted)
	q := quantileSorted(sorted, p)
	var below, total int
	for _, v := range c.Values {
		if v <= q {
			below++
		}
	}
	total = len(c.Values)
	pHat := float64(below) / float64(total)
	var resid moments
	for i := range n {
		var a int
		user := c.Values[c.Offsets[i]:c.Offsets[i+1]]
		for _, v := range user {
			if v <= q {
				a++
			}
		}
		resid.add(float64(a) - pHat*float64(len(user)))
	}
	meanCalls := float64(total) / float64(n)
	sdP := math.Sqrt(resid.variance()/float64(n)) / meanCalls
	lo, hi := max(p-z*sdP, 0), min(p+z*sdP, 1)
	se := (quantileSorted(sorted, hi) - quantileSorted(sorted, lo)) / (2 * z)
	out.q, out.variance = q, se*se
	return out
}

// CompareQuantile compares the per-call quantile at p (in (0, 1), R's type
// 7 over every call of the arm) between arms. Calls cluster by user, the
// unit of randomisation, so the standard error of each arm's quantile is
// user-clustered (Woodruff's interval on the clustered share of calls
// below it, see estimate); the effect is the difference of the quantiles
// with a normal interval from the two independent standard errors.
// Memory: one sorted copy of each arm's values (8 bytes per call) on top
// of the input.
func CompareQuantile(control, treatment Calls, p float64, opt Options) (Comparison, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Comparison{}, err
	}
	if !(p > 0 && p < 1) {
		return Comparison{}, fmt.Errorf("stats: quantile %v outside (0, 1)", p)
	}
	if err := control.validate("control"); err != nil {
		return Comparison{}, err
	}
	if err := treatment.validate("treatment"); err != nil {
		return Comparison{}, err
	}
	z := normalQuantile(1 - opt.Alpha/2)
	scratch := make([]float64, max(len(control.Values), len(treatment.Values)))
	c := control.estimate(p, z, scratch[:len(control.Values)])
	t := treatment.estimate(p, z, scratch[:len(treatment.Values)])
	out := Comparison{Test: TestClusteredQuantile, NControl: c.users, NTreatment: t.users}
	switch {
	case c.users < 2 || t.users < 2 || len(control.Values) < 2 || len(treatment.Values) < 2:
		return out.undefined(fmt.Sprintf("each arm needs at least 2 users with calls (control %d, treatment %d)", c.users, t.users)), nil
	case c.variance == 0 && t.variance == 0:
		return out.undefined("zero variance in both arms"), nil
	}
	out.fillNormal(c.q, t.q, c.variance, t.variance, opt)
	return out, nil
}
