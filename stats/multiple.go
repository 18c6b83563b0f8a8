package stats

import (
	"math"
	"slices"
)

// BenjaminiHochberg returns false-discovery-rate adjusted p-values in the
// input order, as R's p.adjust(p, method = "BH"). NaN entries are treated
// as R treats NA: left as NaN and not counted in the family size.
func BenjaminiHochberg(p []float64) []float64 {
	return adjust(p, func(order []int, present []float64) {
		n := float64(len(order))
		running := math.Inf(1)
		for rank := len(order); rank >= 1; rank-- { // largest p first
			i := order[rank-1]
			running = min(running, n/float64(rank)*present[i])
			present[i] = min(1, running)
		}
	})
}

// Holm returns family-wise adjusted p-values in the input order, as R's
// p.adjust(p, method = "holm"), with the same NaN rule.
func Holm(p []float64) []float64 {
	return adjust(p, func(order []int, present []float64) {
		n := len(order)
		running := 0.0
		for rank := 1; rank <= n; rank++ { // smallest p first
			i := order[rank-1]
			running = max(running, float64(n+1-rank)*present[i])
			present[i] = min(1, running)
		}
	})
}

// adjust drops NaNs, hands the remaining values and their ascending order
// to step (which adjusts them in place), and puts NaNs back.
func adjust(p []float64, step func(order []int, present []float64)) []float64 {
	present := make([]float64, 0, len(p))
	for _, v := range p {
		if !math.IsNaN(v) {
			present = append(present, v)
		}
	}
	order := make([]int, len(present))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmpFloat(present[a], present[b]) })
	step(order, present)
	out := make([]float64, len(p))
	next := 0
	for i, v := range p {
		if math.IsNaN(v) {
			out[i] = v
			continue
		}
		out[i] = present[next]
		next++
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
