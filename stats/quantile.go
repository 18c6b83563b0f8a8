package stats

import "math"

// quantileSorted is R's type-7 quantile (the default of quantile()) of
// sorted values: with h = 1 + (n-1)p, linear interpolation between the
// floor(h)-th and ceil(h)-th order statistics, computed as R computes it.
func quantileSorted(sorted []float64, p float64) float64 {
	index := 1 + float64(len(sorted)-1)*p
	lo, hi := math.Floor(index), math.Ceil(index)
	q, upper := sorted[int(lo)-1], sorted[int(hi)-1]
	if index > lo && upper != q {
		h := index - lo
		q = (1-h)*q + h*upper
	}
	return q
}
