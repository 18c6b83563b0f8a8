package stats

import (
	"fmt"
	"math"
)

// DefaultNStar is the total sample size (both arms) at which a confidence
// sequence is tightest when an experiment does not set sequential_tuning.
const DefaultNStar = 5000

// Interval is a confidence interval with the p-value of the same
// construction, so p < alpha exactly when the interval excludes 0.
type Interval struct {
	Low, High, P float64
}

// ConfidenceSequence is the asymptotic confidence sequence of Waudby-Smith
// et al. (2023, arXiv 2103.06476) around an estimate d with standard error
// se after n observations (both arms), tuned to be tightest at nStar, with
// its always-valid p-value. It is GrowthBook's construction:
//
//	rho  = sqrt((-2 ln α + ln(-2 ln α + 1)) / N*)
//	half = SE·sqrt(N) · sqrt(2 (N rho² + 1) / (N² rho²) · ln(sqrt(N rho² + 1) / α))
//	p    = min(1, 1/E),  E = exp(rho² N (d/SE)² / (2 (N rho² + 1))) / sqrt(N rho² + 1)
//
// The interval covers the true effect at every n simultaneously with
// probability about 1 - α, so reading it every day is safe.
func ConfidenceSequence(d, se float64, n int, nStar, alpha float64) Interval {
	N := float64(n)
	rho2 := csRho2(nStar, alpha)
	nr := N*rho2 + 1
	half := csHalfWidth(se, N, nStar, alpha)
	// log E, so a huge z gives p = 0 rather than overflow.
	z := d / se
	logE := rho2*N*z*z/(2*nr) - 0.5*math.Log(nr)
	p := 1.0
	if logE > 0 {
		p = math.Exp(-logE)
	}
	return Interval{Low: d - half, High: d + half, P: p}
}

// csRho2 is the sequence's rho² for a tuning N* and level alpha.
func csRho2(nStar, alpha float64) float64 {
	return (-2*math.Log(alpha) + math.Log(-2*math.Log(alpha)+1)) / nStar
}

// csHalfWidth is the confidence sequence's half-width around an estimate
// with standard error se after n observations (n need not be whole, for
// power searches).
func csHalfWidth(se, n, nStar, alpha float64) float64 {
	rho2 := csRho2(nStar, alpha)
	nr := n*rho2 + 1
	return se * math.Sqrt(n) * math.Sqrt(2*nr/(n*n*rho2)*math.Log(math.Sqrt(nr)/alpha))
}

// NormalInterval is the fixed-horizon Wald interval d ± z·se with its
// two-sided normal p-value.
func NormalInterval(d, se, alpha float64) Interval {
	half := normalQuantile(1-alpha/2) * se
	return Interval{Low: d - half, High: d + half, P: normalTwoSidedP(d / se)}
}

// AlwaysValid is the sequential form of a Comparison: the confidence
// sequence of the effect (and of the relative lift, by the delta method on
// the same construction) and the always-valid p-value.
type AlwaysValid struct {
	PValue, CILow, CIHigh float64
	RelCILow, RelCIHigh   *float64
}

// setAlwaysValid fills c.AlwaysValid from c.Effect, c.SE and the relative
// lift; tests without a standard error (rank, resampling) get none.
func (c *Comparison) setAlwaysValid(nStar, alpha float64) {
	if c.SE <= 0 || c.Undefined != "" {
		return
	}
	n := c.NControl + c.NTreatment
	iv := ConfidenceSequence(c.Effect, c.SE, n, nStar, alpha)
	av := &AlwaysValid{PValue: iv.P, CILow: iv.Low, CIHigh: iv.High}
	if c.RelLift != nil && c.RelSE > 0 {
		rel := ConfidenceSequence(*c.RelLift, c.RelSE, n, nStar, alpha)
		if !math.IsInf(rel.Low, 0) && !math.IsInf(rel.High, 0) {
			av.RelCILow, av.RelCIHigh = &rel.Low, &rel.High
		}
	}
	if !finite(av.PValue, av.CILow, av.CIHigh) {
		return
	}
	c.AlwaysValid = av
}

func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// validNStar rejects a tuning that is not a positive finite number.
func validNStar(nStar float64) error {
	if !(nStar > 0) || math.IsInf(nStar, 0) {
		return fmt.Errorf("stats: sequential tuning N* %v must be a positive number", nStar)
	}
	return nil
}
