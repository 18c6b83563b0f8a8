package stats

import (
	"math"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// The p-values below come from survival functions evaluated directly in the
// tail (never 1 - cdf), so they keep their relative accuracy down to 1e-300.

// normalTwoSidedP is P(|Z| >= |z|) for a standard normal Z.
func normalTwoSidedP(z float64) float64 {
	return math.Erfc(math.Abs(z) / math.Sqrt2)
}

// studentTwoSidedP is P(|T| >= |t|) for Student's t with df degrees of
// freedom: the regularized incomplete beta I_{df/(df+t²)}(df/2, 1/2).
func studentTwoSidedP(t, df float64) float64 {
	return mathext.RegIncBeta(df/2, 0.5, df/(df+t*t))
}

// chiSquareSurvival is P(X >= x) for a chi-square X with df degrees of freedom.
func chiSquareSurvival(x float64, df int) float64 {
	return mathext.GammaIncRegComp(float64(df)/2, x/2)
}

// normalQuantile is the standard normal quantile at p.
func normalQuantile(p float64) float64 { return distuv.UnitNormal.Quantile(p) }

// studentQuantile is the quantile at p of Student's t with df degrees of freedom.
func studentQuantile(p, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}
