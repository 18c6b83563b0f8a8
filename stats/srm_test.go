package stats

import "testing"

func TestSRMGate(t *testing.T) {
	cases := []struct {
		observed []int64
		weights  []float64
		gate     string
	}{
		{[]int64{5000, 5050}, []float64{50, 50}, GatePass},
		{[]int64{5000, 5600}, []float64{50, 50}, GateFail},
		{[]int64{900, 100}, []float64{9, 1}, GatePass},
		{[]int64{5, 10}, []float64{1, 1}, GateInsufficient}, // 15 < 8 per arm
		{[]int64{0, 0, 0}, []float64{1, 1, 1}, GateInsufficient},
		{[]int64{8, 8}, []float64{1, 1}, GatePass},
	}
	for _, c := range cases {
		got, err := SRM(c.observed, c.weights)
		if err != nil {
			t.Fatalf("%v: %v", c.observed, err)
		}
		if got.Gate != c.gate {
			t.Errorf("%v vs %v: gate %q (p %v), want %q", c.observed, c.weights, got.Gate, got.PValue, c.gate)
		}
		if got.PValue < 0 || got.PValue > 1 || got.DF != len(c.observed)-1 {
			t.Errorf("%v: p %v, df %d", c.observed, got.PValue, got.DF)
		}
	}
}

func TestSRMRejectsBadInput(t *testing.T) {
	for _, c := range []struct {
		observed []int64
		weights  []float64
	}{
		{[]int64{1, 2}, []float64{1}},
		{[]int64{1}, []float64{1}},
		{[]int64{-1, 2}, []float64{1, 1}},
		{[]int64{1, 2}, []float64{0, 1}},
		{[]int64{1, 2}, []float64{1, -2}},
	} {
		if _, err := SRM(c.observed, c.weights); err == nil {
			t.Errorf("SRM(%v, %v) accepted", c.observed, c.weights)
		}
	}
}
