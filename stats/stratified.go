package stats

import (
	"fmt"
	"math"
	"slices"
)

// Stratum is one stratum's per-user values of each arm: the users first
// exposed in one phase of an experiment whose weights changed.
type Stratum struct {
	Control, Treatment []float64
	// ControlPre and TreatmentPre, when set (for every stratum), are the
	// users' pre-exposure values (CUPED): the values are adjusted by one
	// θ and mean(x) pooled over every stratum and arm, as CompareCUPED
	// does, before the strata are combined.
	ControlPre, TreatmentPre []float64
}

// CompareStratified is the phase-stratified difference in means
// (stats/README.md, "Stratified effect"): the per-stratum differences
// weighted by each stratum's share of the users,
//
//	d = Σ w_k (m_tk − m_ck),  w_k = n_k / N,  Var(d) = Σ w_k² (s²_tk/n_tk + s²_ck/n_ck)
//
// with a Welch–Satterthwaite df over the 2K variance terms, the relative
// lift of the stratified means Σ w_k m_tk / Σ w_k m_ck − 1 by the delta
// method, and the always-valid sequence at N users. With one stratum it
// is Compare(WelchT). Only WelchT and ZTest (whose stratified form is
// this same difference of proportions with unpooled variances) are
// stratified; a stratum without two users in each arm is left out (its
// users have no comparison), and none left is Undefined.
func CompareStratified(m Method, strata []Stratum, opt Options) (Comparison, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Comparison{}, err
	}
	if m != WelchT && m != ZTest {
		return Comparison{}, fmt.Errorf("stats: %s has no stratified form", m)
	}
	adjusted, summary, err := cupedStrata(strata)
	if err != nil {
		return Comparison{}, err
	}
	check := m
	if summary != nil {
		check = WelchT // adjusted proportions are no longer 0/1
	}
	out := Comparison{Test: string(WelchT)}
	type part struct {
		n      float64
		c, t   moments
		vc, vt float64
	}
	var parts []part
	var total float64
	for i, s := range adjusted {
		if err := validateArm(fmt.Sprintf("stratum %d control", i), s.Control, check); err != nil {
			return Comparison{}, err
		}
		if err := validateArm(fmt.Sprintf("stratum %d treatment", i), s.Treatment, check); err != nil {
			return Comparison{}, err
		}
		c, t := momentsOf(s.Control), momentsOf(s.Treatment)
		out.NControl, out.NTreatment = out.NControl+c.n, out.NTreatment+t.n
		if c.n < 2 || t.n < 2 {
			continue
		}
		parts = append(parts, part{n: float64(c.n + t.n), c: c, t: t, vc: c.varianceOfMean(), vt: t.varianceOfMean()})
		total += float64(c.n + t.n)
	}
	if len(parts) == 0 {
		return out.undefined("no stratum has at least 2 values in each arm"), nil
	}
	var d, v, mc, mt, vmc, vmt, dfDen float64
	for _, p := range parts {
		w := p.n / total
		d += w * (p.t.mean - p.c.mean)
		mc, mt = mc+w*p.c.mean, mt+w*p.t.mean
		vmc, vmt = vmc+w*w*p.vc, vmt+w*w*p.vt
		ac, at := w*w*p.vc, w*w*p.vt
		dfDen += ac*ac/float64(p.c.n-1) + at*at/float64(p.t.n-1)
	}
	v = vmc + vmt
	if v == 0 {
		return out.undefined("zero variance in both arms"), nil
	}
	se := math.Sqrt(v)
	df := v * v / dfDen
	out.Statistic = d / se
	out.PValue = studentTwoSidedP(out.Statistic, df)
	half := studentQuantile(1-opt.Alpha/2, df) * se
	out.Effect, out.CILow, out.CIHigh, out.SE = d, d-half, d+half, se
	if !out.finite() {
		return out.undefined("result is not finite (values too large)"), nil
	}
	out.setRelativeLiftOf(mc, mt, vmc, vmt, opt.Alpha)
	out.setAlwaysValid(opt.NStar, opt.Alpha)
	if summary != nil {
		out.CUPED = summary
		if raw, err := CompareStratified(m, stripPre(strata), opt); err == nil && raw.Undefined == "" && raw.SE > 0 {
			summary.VarianceReduction = 1 - v/(raw.SE*raw.SE)
		}
	}
	return out, nil
}

// cupedStrata adjusts every stratum's values by the pooled θ when the
// strata carry pre-exposure values; otherwise (or when x does not vary)
// it returns the strata as they are and no summary.
func cupedStrata(strata []Stratum) ([]Stratum, *CUPEDSummary, error) {
	if !slices.ContainsFunc(strata, func(s Stratum) bool { return s.ControlPre != nil || s.TreatmentPre != nil }) {
		return strata, nil, nil
	}
	var co comoments
	for i, s := range strata {
		if len(s.ControlPre) != len(s.Control) || len(s.TreatmentPre) != len(s.Treatment) {
			return nil, nil, fmt.Errorf("stats: stratum %d: CUPED needs one covariate per user", i)
		}
		for _, xs := range [][]float64{s.ControlPre, s.TreatmentPre} {
			if err := ValidateValues(xs); err != nil {
				return nil, nil, fmt.Errorf("stats: stratum %d covariate: %w", i, err)
			}
		}
		for j := range s.Control {
			co.add(s.ControlPre[j], s.Control[j])
		}
		for j := range s.Treatment {
			co.add(s.TreatmentPre[j], s.Treatment[j])
		}
	}
	if co.mxx == 0 {
		return stripPre(strata), nil, nil
	}
	theta := co.slope()
	adjust := func(ys, xs []float64) []float64 {
		out := make([]float64, len(ys))
		for i, y := range ys {
			out[i] = y - theta*(xs[i]-co.meanX)
		}
		return out
	}
	out := make([]Stratum, len(strata))
	for i, s := range strata {
		out[i] = Stratum{Control: adjust(s.Control, s.ControlPre), Treatment: adjust(s.Treatment, s.TreatmentPre)}
	}
	return out, &CUPEDSummary{Theta: theta}, nil
}

// stripPre drops the covariates (the unadjusted comparison).
func stripPre(strata []Stratum) []Stratum {
	out := make([]Stratum, len(strata))
	for i, s := range strata {
		out[i] = Stratum{Control: s.Control, Treatment: s.Treatment}
	}
	return out
}
