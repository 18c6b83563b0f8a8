package clickhouse_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/expd/expd/clickhouse/clickhousetest"
)

// A quantile metric's calls cross the wire packed in a string
// (packedFloats): every value must come back bit for bit, those whose
// high bytes are zero too (reinterpretAsString drops a value's trailing
// zero bytes, which the packing restores).
func TestPackedCallsKeepEveryBit(t *testing.T) {
	s := clickhousetest.Store(t, false)
	rng := rand.New(rand.NewPCG(7, 32))
	cases := [][]float64{
		nil,
		{0},
		{math.Copysign(0, -1), 5e-324, 1e-310, 2, 1.5, -2.25, math.MaxFloat64, -math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1)},
	}
	var many []float64
	for range 1000 {
		many = append(many, math.Float64frombits(rng.Uint64()&^(0x7ff<<52)|uint64(rng.IntN(0x7ff))<<52)) // finite, any mantissa
	}
	cases = append(cases, many)
	for _, xs := range cases {
		got, err := s.PackedFloats(t.Context(), xs)
		if err != nil {
			t.Fatalf("%d values: %v", len(xs), err)
		}
		if !slices.EqualFunc(got, xs, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
			t.Errorf("packed %v; got back %v", xs[:min(len(xs), 10)], got[:min(len(got), 10)])
		}
	}
}
