package results

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/plans"
)

// BenchmarkAnalyzePhases times a run's statistics (Analyze) at 1,000,000
// users with CUPED on the welch_t and z_test metrics, over one phase and
// over two (per-phase SRM, stratified comparisons), on the same sample.
func BenchmarkAnalyzePhases(b *testing.B) {
	const users = 1_000_000
	phases := twoPhases()
	d := phasedDesign(phases)
	d.Limits = plans.Get(plans.Enterprise)
	conv := d.Metrics[0]
	conv.Name, conv.Kind, conv.MethodDefault = "conv", "proportion", "z_test"
	d.Metrics = append(d.Metrics, conv)
	d.Allocation[0].Weight, d.Allocation[1].Weight = 50, 50
	phases[1].Weights = map[string]float64{"a": 50, "b": 50}
	r := rand.New(rand.NewPCG(1, 2))
	s := Sample{Arms: map[string]*Arm{}}
	for _, name := range []string{"a", "b"} {
		arm := &Arm{Values: make([][]float64, 3), Pre: make([][]float64, 3)}
		for i := range users / 2 {
			arm.UserIDs = append(arm.UserIDs, name+strconv.Itoa(i))
			arm.First = append(arm.First, phases[0].Start.Add(time.Duration(r.Int64N(int64(48*time.Hour)))))
			v := 10 + r.NormFloat64()
			arm.Values[0], arm.Pre[0] = append(arm.Values[0], v), append(arm.Pre[0], v+r.NormFloat64())
			arm.Values[1] = append(arm.Values[1], v)
			c := float64(r.IntN(2))
			arm.Values[2], arm.Pre[2] = append(arm.Values[2], c), append(arm.Pre[2], float64(r.IntN(2)))
		}
		s.Arms[name] = arm
	}
	for _, c := range []struct {
		name   string
		phases int
	}{{"one phase", 1}, {"two phases", 2}} {
		b.Run(c.name, func(b *testing.B) {
			d := d
			d.Phases = phases[:c.phases]
			if c.phases == 1 {
				d.Phases = []experiments.Phase{{Number: 1, Start: phases[0].Start, End: phases[1].End, Version: 1, Weights: phases[1].Weights}}
			}
			for b.Loop() {
				if _, err := Analyze(d, s, testNow, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
