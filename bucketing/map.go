package bucketing

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Range assigns the buckets [Start, End) to Variant.
type Range struct {
	Variant string `json:"variant"`
	Start   uint32 `json:"start"`
	End     uint32 `json:"end"`
}

// Map is a bucket map in the canonical form of doc.go: ranges sorted by
// Start, covering [0, bucket_count) exactly, adjacent ranges of the same
// variant merged.
type Map []Range

// Lookup returns the variant that owns bucket, by binary search over the
// range starts. It never allocates. ok is false when no range holds bucket.
func (m Map) Lookup(bucket uint32) (variant string, ok bool) {
	// Find the first range starting after bucket; its predecessor is the
	// only candidate.
	lo, hi := 0, len(m)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if m[mid].Start <= bucket {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 || bucket >= m[lo-1].End {
		return "", false
	}
	return m[lo-1].Variant, true
}

// Counts returns the number of buckets each variant owns.
func (m Map) Counts() map[string]uint32 {
	counts := make(map[string]uint32, len(m))
	for _, r := range m {
		counts[r.Variant] += r.End - r.Start
	}
	return counts
}

// Validate checks that m is a canonical map of [0, bucketCount); it reports
// every problem, one *FieldError each, joined.
func (m Map) Validate(bucketCount uint32) error {
	if err := ValidateBucketCount(bucketCount); err != nil {
		return err
	}
	if len(m) == 0 {
		return mapError("map", "must have at least one range")
	}
	var problems []error
	next := uint32(0) // where the next range must start
	for i, r := range m {
		field := fmt.Sprintf("map[%d]", i)
		if r.Variant == "" {
			problems = append(problems, mapError(field+".variant", "must not be empty"))
		}
		if i > 0 && r.Variant == m[i-1].Variant {
			problems = append(problems, mapError(field+".variant", fmt.Sprintf("%q continues the previous range; adjacent ranges must be merged", r.Variant)))
		}
		if r.Start != next {
			problems = append(problems, mapError(field+".start", fmt.Sprintf("must be %d (where the previous range ends), got %d", next, r.Start)))
		}
		if r.End <= r.Start {
			problems = append(problems, mapError(field+".end", fmt.Sprintf("must be greater than start %d, got %d", r.Start, r.End)))
		}
		next = r.End
	}
	if next != bucketCount {
		problems = append(problems, mapError(fmt.Sprintf("map[%d].end", len(m)-1), fmt.Sprintf("the last range must end at bucket_count %d, got %d", bucketCount, next)))
	}
	return errors.Join(problems...)
}

// canonical sorts ranges by Start and merges adjacent ranges of one variant.
// The ranges must tile [0, bucket_count) and be non-empty.
func canonical(ranges []Range) Map {
	slices.SortFunc(ranges, func(a, b Range) int { return cmp.Compare(a.Start, b.Start) })
	merged := make(Map, 0, len(ranges))
	for _, r := range ranges {
		if last := len(merged) - 1; last >= 0 && merged[last].Variant == r.Variant {
			merged[last].End = r.End
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

func mapError(field, reason string) error {
	return &FieldError{Field: field, Reason: reason, class: ErrMap}
}
