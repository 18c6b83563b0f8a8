package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/testdata/bucketing/vectors"
)

// alloc builds an allocation from comma-separated variant names and their
// weights, in order.
func alloc(names string, weights ...float64) []bucketing.Slice {
	variants := strings.Split(names, ",")
	if len(variants) != len(weights) {
		panic(fmt.Sprintf("alloc %q: %d names, %d weights", names, len(variants), len(weights)))
	}
	out := make([]bucketing.Slice, len(variants))
	for i, v := range variants {
		out[i] = bucketing.Slice{Variant: v, Weight: weights[i]}
	}
	return out
}

type sized struct {
	bucketCount uint32
	allocation  []bucketing.Slice
}

// Hand-picked allocations: ties, weight 0, 1 bucket, the maximum count,
// inexact decimals, extreme magnitudes, non-ASCII variant names.
var initialAllocations = []sized{
	{10000, alloc("control,concise", 50, 50)},
	{10000, alloc("control,treatment", 60, 40)},
	{10, alloc("a,b,c", 1, 1, 1)},
	{2, alloc("a,b,c", 1, 1, 1)},
	{1, alloc("a,b,c", 1, 1, 1)},
	{1, alloc("control,treatment", 50, 50)},
	{10, alloc("a,b,c", 0, 1, 1)},
	{1, alloc("a,b,c", 0, 0, 1)},
	{10000, alloc("a,b,c", 33.3, 33.3, 33.4)},
	{bucketing.MaxBucketCount, alloc("a,b,c", 0.1, 0.2, 0.7)},
	{bucketing.MaxBucketCount, alloc("control", 1)},
	{7, alloc("v0,v1,v2,v3,v4,v5,v6,v7,v8,v9", 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)},
	{bucketing.MaxBucketCount, alloc("a,b", 1e-300, 1)},
	{1000, alloc("a,b", 5e-324, 5e-324)},
	{10000, alloc("a,b", 1e300, 3e300)},
	{999983, alloc("a,b,c", 1, 1, 1)},
	{10000, alloc("b,a", 2, 1)},
	{100, alloc("control,ユーザー向け,😀", 1, 2, 3)},
}

var variantPool = []string{"control", "concise", "verbose", "friendly", "formal", "terse"}

var mapBucketCounts = []uint32{1, 2, 7, 10, 100, 1000, 10000, 65536}

// randomAlloc draws 1 to 4 variants with integer, two-decimal or zero weights.
func randomAlloc(rng *rand.Rand) []bucketing.Slice {
	names := append([]string(nil), variantPool...)
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	out := make([]bucketing.Slice, 1+rng.IntN(4))
	positive := false
	for i := range out {
		out[i] = bucketing.Slice{Variant: names[i], Weight: randomWeight(rng)}
		positive = positive || out[i].Weight > 0
	}
	if !positive {
		out[0].Weight = 1
	}
	return out
}

func randomWeight(rng *rand.Rand) float64 {
	switch rng.IntN(5) {
	case 0:
		return 0
	case 1:
		return math.Round(rng.Float64()*10000) / 100
	default:
		return float64(rng.IntN(101))
	}
}

func initialMapCases() ([]vectors.InitialMapCase, error) {
	inputs := append([]sized(nil), initialAllocations...)
	rng := rand.New(rand.NewPCG(2, 71))
	for range 30 {
		inputs = append(inputs, sized{mapBucketCounts[rng.IntN(len(mapBucketCounts))], randomAlloc(rng)})
	}
	cases := make([]vectors.InitialMapCase, 0, len(inputs))
	for _, in := range inputs {
		m, err := bucketing.InitialMap(in.allocation, in.bucketCount)
		if err != nil {
			return nil, fmt.Errorf("initial map case %v: %w", in, err)
		}
		cases = append(cases, vectors.InitialMapCase{BucketCount: in.bucketCount, Allocation: in.allocation, Map: m})
	}
	return cases, nil
}
