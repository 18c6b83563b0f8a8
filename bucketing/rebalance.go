package bucketing

import "fmt"

// Rebalance builds the bucket map of a new config version from the previous
// version's map, moving the fewest buckets possible (doc.go, "Rebalancing").
// old must be a canonical map of bucketCount buckets.
func Rebalance(old Map, alloc []Slice, bucketCount uint32) (Map, error) {
	if err := validateInputs(alloc, bucketCount); err != nil {
		return nil, fmt.Errorf("rebalance bucket map: %w", err)
	}
	if err := old.Validate(bucketCount); err != nil {
		return nil, fmt.Errorf("rebalance bucket map: old map: %w", err)
	}
	targets := targetCounts(alloc, bucketCount)
	oldCounts := old.Counts()

	// keep[v]: how many of its lowest buckets variant v still keeps.
	// Variants absent from alloc keep none.
	keep := make(map[string]uint32, len(alloc))
	for i, s := range alloc {
		keep[s.Variant] = min(oldCounts[s.Variant], targets[i])
	}
	ranges := make([]Range, 0, len(old)+len(alloc))
	var freed []Range // ascending, since old is sorted
	for _, r := range old {
		kept := min(keep[r.Variant], r.End-r.Start)
		keep[r.Variant] -= kept
		if kept > 0 {
			ranges = append(ranges, Range{Variant: r.Variant, Start: r.Start, End: r.Start + kept})
		}
		if r.Start+kept < r.End {
			freed = append(freed, Range{Start: r.Start + kept, End: r.End})
		}
	}

	for i, s := range alloc {
		growth := targets[i] - min(oldCounts[s.Variant], targets[i])
		for growth > 0 {
			take := min(growth, freed[0].End-freed[0].Start)
			ranges = append(ranges, Range{Variant: s.Variant, Start: freed[0].Start, End: freed[0].Start + take})
			freed[0].Start += take
			if freed[0].Start == freed[0].End {
				freed = freed[1:]
			}
			growth -= take
		}
	}
	return canonical(ranges), nil
}
