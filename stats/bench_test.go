package stats

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// Benchmarks report ns/value and B/value (bytes allocated per input value)
// besides the usual per-operation numbers. Run with
//   go test -run '^$' -bench . -benchtime 1x ./stats

func benchArms(n int) (control, treatment []float64) {
	r := rand.New(rand.NewPCG(9, 9))
	control, treatment = make([]float64, n), make([]float64, n)
	for i := range n {
		control[i] = 800 + 200*r.NormFloat64()
		treatment[i] = 810 + 200*r.NormFloat64()
	}
	return control, treatment
}

func benchCompare(b *testing.B, m Method, perArm int, opt Options) {
	control, treatment := benchArms(perArm)
	values := float64(2 * perArm)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		got, err := Compare(m, control, treatment, opt)
		if err != nil || got.Undefined != "" {
			b.Fatalf("err %v, undefined %q", err, got.Undefined)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	perOp := float64(b.N)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/perOp/values, "ns/value")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/perOp/values, "B/value")
}

func BenchmarkWelch(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("%d_per_arm", n), func(b *testing.B) { benchCompare(b, WelchT, n, Options{}) })
	}
}

func BenchmarkMannWhitney(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("%d_per_arm", n), func(b *testing.B) { benchCompare(b, MannWhitney, n, Options{}) })
	}
}

func BenchmarkPermutation(b *testing.B) {
	b.Run("100000_per_arm_10000_draws", func(b *testing.B) {
		benchCompare(b, Permutation, 100_000, Options{MaxDraws: 10_000})
	})
}

func BenchmarkBootstrap(b *testing.B) {
	b.Run("100000_per_arm_10000_draws", func(b *testing.B) {
		benchCompare(b, Bootstrap, 100_000, Options{MaxDraws: 10_000})
	})
}

func BenchmarkDistributions(b *testing.B) {
	control, treatment := benchArms(1_000_000)
	b.ResetTimer()
	for b.Loop() {
		Distributions([][]float64{control, treatment}, 0)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2e6, "ns/value")
}

func BenchmarkSampleCap(b *testing.B) {
	ids := userIDs(1_000_000)
	b.ResetTimer()
	for b.Loop() {
		SampleCap(ids, 100_000)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ns/value")
}
