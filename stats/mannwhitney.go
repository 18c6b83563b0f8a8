package stats

import (
	"math"
	"slices"
)

// mannWhitney is the Mann–Whitney U (Wilcoxon rank-sum) test with the normal
// approximation, tie correction and continuity correction, as R's
// wilcox.test(treatment, control, exact = FALSE, correct = TRUE). The
// statistic is R's W (the U of the treatment arm); the effect is the
// Hodges–Lehmann shift with its distribution-free CI (hodgeslehmann.go).
func mannWhitney(out *Comparison, a arms, opt Options) {
	xs, ys := sortedCopy(a.treatment), sortedCopy(a.control)
	nx, ny := float64(len(xs)), float64(len(ys))
	rankSum, tieTerm := rankSumOfFirst(xs, ys)
	w := rankSum - nx*(nx+1)/2
	sigma := math.Sqrt(nx * ny / 12 * ((nx + ny + 1) - tieTerm/((nx+ny)*(nx+ny-1))))
	if sigma == 0 {
		out.Undefined = "all values are tied"
		return
	}
	centered := w - nx*ny/2
	z := (centered - 0.5*sign(centered)) / sigma
	out.Statistic = w
	out.PValue = normalTwoSidedP(z)
	shift := hodgesLehmann(xs, ys, normalQuantile(1-opt.Alpha/2)*sigma)
	out.Effect, out.CILow, out.CIHigh = shift.estimate, shift.low, shift.high
}

// sign is -1, 0 or 1, as R's sign (math.Copysign would give ±0.5 at 0).
func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

func sortedCopy(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// rankSumOfFirst merges two sorted slices and returns the sum of the
// mid-ranks of xs in the pooled sample and Σ(t³ - t) over tie groups.
func rankSumOfFirst(xs, ys []float64) (rankSum, tieTerm float64) {
	i, j, before := 0, 0, 0
	for i < len(xs) || j < len(ys) {
		v := nextValue(xs, ys, i, j)
		ci, cj := runLength(xs, i, v), runLength(ys, j, v)
		t := float64(ci + cj)
		rankSum += float64(ci) * (float64(before) + (t+1)/2)
		tieTerm += t*t*t - t
		before += ci + cj
		i, j = i+ci, j+cj
	}
	return rankSum, tieTerm
}

func nextValue(xs, ys []float64, i, j int) float64 {
	switch {
	case i == len(xs):
		return ys[j]
	case j == len(ys):
		return xs[i]
	default:
		return min(xs[i], ys[j])
	}
}

// runLength counts the values equal to v from s[start] on.
func runLength(s []float64, start int, v float64) int {
	n := 0
	for start+n < len(s) && s[start+n] == v {
		n++
	}
	return n
}
