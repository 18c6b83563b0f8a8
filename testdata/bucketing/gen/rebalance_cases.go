package main

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/testdata/bucketing/vectors"
)

type transition struct {
	bucketCount uint32
	from, to    []bucketing.Slice
}

// Hand-picked weight changes: unchanged and scaled weights, the issue's
// 50/50 -> 60/40 and back, added, removed, renamed and zeroed variants.
var transitions = []transition{
	{10000, alloc("control,concise", 50, 50), alloc("control,concise", 50, 50)},
	{10000, alloc("control,concise", 50, 50), alloc("control,concise", 1, 1)},
	{10000, alloc("control,concise", 50, 50), alloc("control,concise", 60, 40)},
	{10000, alloc("control,concise", 60, 40), alloc("control,concise", 50, 50)},
	{10000, alloc("control,concise", 50, 50), alloc("control,concise,verbose", 34, 33, 33)},
	{10, alloc("a,b", 50, 50), alloc("a,b,c", 40, 40, 20)},
	{10, alloc("a,b,c", 1, 1, 1), alloc("a,c", 1, 1)},
	{10000, alloc("control,concise", 50, 50), alloc("control,verbose", 50, 50)},
	{9, alloc("a,b,c", 1, 1, 1), alloc("a,b,c", 1, 0, 1)},
	{10, alloc("a,b", 1, 1), alloc("b,a", 3, 1)},
	{1, alloc("a,b", 2, 1), alloc("a,b", 1, 2)},
	{10, alloc("a,b", 50, 50), alloc("a,b", 100, 0)},
	{bucketing.MaxBucketCount, alloc("control,concise", 50, 50), alloc("control,concise,verbose", 1, 1, 1)},
}

// rebalanceCases: the hand-picked transitions, then random walks of config
// versions, whose later maps are fragmented the way long-lived experiments'
// maps are.
func rebalanceCases() ([]vectors.RebalanceCase, error) {
	var cases []vectors.RebalanceCase
	step := func(old bucketing.Map, to []bucketing.Slice, n uint32) (bucketing.Map, error) {
		next, err := bucketing.Rebalance(old, to, n)
		if err != nil {
			return nil, fmt.Errorf("rebalance case %v -> %v: %w", old, to, err)
		}
		cases = append(cases, vectors.RebalanceCase{BucketCount: n, OldMap: old, Allocation: to, Map: next})
		return next, nil
	}
	for _, tr := range transitions {
		old, err := bucketing.InitialMap(tr.from, tr.bucketCount)
		if err != nil {
			return nil, fmt.Errorf("rebalance case start %v: %w", tr.from, err)
		}
		if _, err := step(old, tr.to, tr.bucketCount); err != nil {
			return nil, err
		}
	}
	rng := rand.New(rand.NewPCG(5, 8))
	for walk := range 10 {
		n := mapBucketCounts[walk%len(mapBucketCounts)]
		current := randomAlloc(rng)
		m, err := bucketing.InitialMap(current, n)
		if err != nil {
			return nil, fmt.Errorf("random walk start %v: %w", current, err)
		}
		for range 4 {
			current = mutate(rng, current)
			if m, err = step(m, current, n); err != nil {
				return nil, err
			}
		}
	}
	return cases, nil
}

// mutate makes the next config version: new weights, an added variant, a
// removed variant, or a reordered allocation.
func mutate(rng *rand.Rand, prev []bucketing.Slice) []bucketing.Slice {
	next := slices.Clone(prev)
	switch rng.IntN(4) {
	case 0:
		for i := range next {
			next[i].Weight = randomWeight(rng)
		}
	case 1:
		for _, v := range variantPool {
			if !slices.ContainsFunc(next, func(s bucketing.Slice) bool { return s.Variant == v }) {
				next = append(next, bucketing.Slice{Variant: v, Weight: randomWeight(rng)})
				break
			}
		}
	case 2:
		if len(next) > 1 {
			i := rng.IntN(len(next))
			next = slices.Delete(next, i, i+1)
		}
	default:
		rng.Shuffle(len(next), func(i, j int) { next[i], next[j] = next[j], next[i] })
	}
	if !slices.ContainsFunc(next, func(s bucketing.Slice) bool { return s.Weight > 0 }) {
		next[0].Weight = 1
	}
	return next
}
