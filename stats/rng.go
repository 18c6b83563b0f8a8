package stats

import (
	"math/bits"
	"math/rand/v2"
)

// Streams of resampling randomness are keyed by (seed, purpose, chunk) so a
// result depends only on the seed and the input, never on how chunks were
// scheduled over goroutines.
const (
	purposePermutation uint64 = 1
	purposeBootstrap   uint64 = 2
)

func newStream(seed, purpose uint64, chunk int) *rand.PCG {
	return rand.NewPCG(seed, splitmix64(purpose<<40^uint64(chunk)))
}

// splitmix64 scrambles a counter into a well-mixed 64-bit value.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// uniformIndex returns an unbiased uniform integer in [0, n) (Lemire's
// multiply-and-reject), cheaper than rand.Rand's interface call per value.
func uniformIndex(src *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		threshold := -n % n
		for lo < threshold {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}
