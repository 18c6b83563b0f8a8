package bucketing

import (
	"math/big"
	"slices"
)

// targetCounts turns a valid allocation's weights into bucket counts, one per
// slice, by the largest-remainder rule of doc.go. It works on exact rationals
// so that no implementation can round differently.
func targetCounts(alloc []Slice, bucketCount uint32) []uint32 {
	total := new(big.Rat)
	for _, s := range alloc {
		total.Add(total, new(big.Rat).SetFloat64(s.Weight))
	}
	buckets := new(big.Rat).SetUint64(uint64(bucketCount))
	counts := make([]uint32, len(alloc))
	remainders := make([]*big.Rat, len(alloc))
	leftover := bucketCount
	for i, s := range alloc {
		quota := new(big.Rat).SetFloat64(s.Weight)
		quota.Mul(quota, buckets).Quo(quota, total)
		// quota >= 0, so truncating division is the floor.
		floor := new(big.Int).Quo(quota.Num(), quota.Denom())
		counts[i] = uint32(floor.Uint64())
		remainders[i] = quota.Sub(quota, new(big.Rat).SetInt(floor))
		leftover -= counts[i]
	}
	order := make([]int, len(alloc))
	for i := range order {
		order[i] = i
	}
	// Larger remainder first; the stable sort keeps allocation order on ties.
	slices.SortStableFunc(order, func(a, b int) int { return remainders[b].Cmp(remainders[a]) })
	for _, i := range order[:leftover] {
		counts[i]++
	}
	return counts
}
