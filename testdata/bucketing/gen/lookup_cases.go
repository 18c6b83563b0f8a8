package main

import (
	"math"
	"slices"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/testdata/bucketing/vectors"
)

// maxLookupRanges keeps lookup cases short: each one carries its whole map.
const maxLookupRanges = 12

// lookupCases probes the maps of the other cases at every range boundary,
// at the last bucket, and just past the end (no variant).
func lookupCases(initial []vectors.InitialMapCase, rebalance []vectors.RebalanceCase) []vectors.LookupCase {
	var maps []bucketing.Map
	for _, c := range rebalance {
		maps = append(maps, c.Map)
	}
	for _, c := range initial {
		maps = append(maps, c.Map)
	}
	var cases []vectors.LookupCase
	for _, m := range maps {
		if len(m) > maxLookupRanges {
			continue
		}
		for _, bucket := range probes(m) {
			c := vectors.LookupCase{Map: m, Bucket: bucket}
			if variant, ok := m.Lookup(bucket); ok {
				c.Variant = &variant
			}
			cases = append(cases, c)
		}
	}
	return cases
}

func probes(m bucketing.Map) []uint32 {
	end := m[len(m)-1].End
	buckets := []uint32{end, math.MaxUint32}
	for _, r := range m {
		buckets = append(buckets, r.Start, r.End-1)
	}
	slices.Sort(buckets)
	return slices.Compact(buckets)
}
