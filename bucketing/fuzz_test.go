package bucketing

import (
	"slices"
	"testing"
)

var fuzzVariants = []string{"control", "a", "b", "c", "d", "e"}

// fuzzAlloc decodes bytes into an allocation: each byte picks a variant
// (high bits) and a weight 0..15 (low bits); repeated variants are skipped.
// It reports false when no weight is positive.
func fuzzAlloc(spec []byte) ([]Slice, bool) {
	var alloc []Slice
	positive := false
	for _, b := range spec {
		v := fuzzVariants[int(b>>4)%len(fuzzVariants)]
		if slices.ContainsFunc(alloc, func(s Slice) bool { return s.Variant == v }) {
			continue
		}
		alloc = append(alloc, Slice{Variant: v, Weight: float64(b & 0x0f)})
		positive = positive || b&0x0f > 0
	}
	return alloc, positive
}

// FuzzRebalance checks Rebalance's invariants (checkMinimalMove) across two
// successive weight changes, and that repeating a version changes nothing.
func FuzzRebalance(f *testing.F) {
	f.Add(uint16(10), []byte{0x05, 0x15}, []byte{0x06, 0x14}, []byte{0x01, 0x11, 0x21})
	f.Add(uint16(1), []byte{0x01, 0x12}, []byte{0x12, 0x01}, []byte{0x31})
	f.Add(uint16(9), []byte{0x01, 0x11, 0x21}, []byte{0x01, 0x21}, []byte{0x20, 0x51, 0x0f})
	f.Add(uint16(4999), []byte{0x0f, 0x1f, 0x2f, 0x3f}, []byte{0x4f, 0x01}, []byte{0x07, 0x17, 0x27, 0x37, 0x47, 0x57})
	f.Fuzz(func(t *testing.T, size uint16, first, second, third []byte) {
		// Keep bucket-by-bucket checks cheap: at most 5,000 buckets.
		bucketCount := 1 + uint32(size)%5000
		m, err := InitialMap(mustFuzzAlloc(t, first), bucketCount)
		if err != nil {
			t.Fatalf("InitialMap: %v", err)
		}
		for _, spec := range [][]byte{second, third} {
			alloc := mustFuzzAlloc(t, spec)
			next, err := Rebalance(m, alloc, bucketCount)
			if err != nil {
				t.Fatalf("Rebalance(%v, %v): %v", m, alloc, err)
			}
			checkMinimalMove(t, m, alloc, bucketCount, next)
			again, err := Rebalance(next, alloc, bucketCount)
			if err != nil || !slices.Equal(again, next) {
				t.Fatalf("repeating allocation %v changed the map %v to %v (err %v)", alloc, next, again, err)
			}
			m = next
		}
	})
}

func mustFuzzAlloc(t *testing.T, spec []byte) []Slice {
	alloc, ok := fuzzAlloc(spec)
	if !ok {
		t.Skip("allocation without a positive weight")
	}
	return alloc
}
