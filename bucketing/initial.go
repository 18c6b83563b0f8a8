package bucketing

import "fmt"

// InitialMap builds the bucket map of an experiment's first config version:
// largest-remainder counts laid out contiguously in allocation order.
func InitialMap(alloc []Slice, bucketCount uint32) (Map, error) {
	if err := validateInputs(alloc, bucketCount); err != nil {
		return nil, fmt.Errorf("initial bucket map: %w", err)
	}
	counts := targetCounts(alloc, bucketCount)
	ranges := make([]Range, 0, len(alloc))
	start := uint32(0)
	for i, s := range alloc {
		if counts[i] == 0 {
			continue
		}
		ranges = append(ranges, Range{Variant: s.Variant, Start: start, End: start + counts[i]})
		start += counts[i]
	}
	return canonical(ranges), nil
}

func validateInputs(alloc []Slice, bucketCount uint32) error {
	if err := ValidateBucketCount(bucketCount); err != nil {
		return err
	}
	return ValidateAllocation(alloc)
}
