package stats

import "math"

// moments accumulates count, mean and the sum of squared deviations in one
// pass (Welford), so no second copy of the data is needed.
type moments struct {
	n    int
	mean float64
	m2   float64
}

func momentsOf(xs []float64) moments {
	var m moments
	for _, x := range xs {
		m.add(x)
	}
	return m
}

func (m *moments) add(x float64) {
	m.n++
	d := x - m.mean
	m.mean += d / float64(m.n)
	m.m2 += d * (x - m.mean)
}

// variance is the sample variance (n - 1 denominator); 0 below two values.
func (m moments) variance() float64 {
	if m.n < 2 {
		return 0
	}
	return m.m2 / float64(m.n-1)
}

func (m moments) sd() float64 { return math.Sqrt(m.variance()) }

// varianceOfMean is variance / n, the squared standard error of the mean.
func (m moments) varianceOfMean() float64 { return m.variance() / float64(m.n) }

// sum adds xs in order.
func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}
