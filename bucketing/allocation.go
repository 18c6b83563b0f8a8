package bucketing

import (
	"errors"
	"fmt"
	"math"
)

// Slice is one entry of an experiment's allocation: a variant and its
// relative weight.
type Slice struct {
	Variant string  `json:"variant"`
	Weight  float64 `json:"weight"`
}

// ValidateAllocation reports every rule of doc.go's "Allocation" section that
// alloc breaks, one *FieldError per problem, joined.
func ValidateAllocation(alloc []Slice) error {
	if len(alloc) == 0 {
		return allocationError("allocation", "must list at least one variant")
	}
	var problems []error
	seen := make(map[string]bool, len(alloc))
	anyPositive := false
	for i, s := range alloc {
		switch {
		case s.Variant == "":
			problems = append(problems, allocationError(fmt.Sprintf("allocation[%d].variant", i), "must not be empty"))
		case seen[s.Variant]:
			problems = append(problems, allocationError(fmt.Sprintf("allocation[%d].variant", i), fmt.Sprintf("duplicate variant %q", s.Variant)))
		}
		seen[s.Variant] = true
		if math.IsNaN(s.Weight) || math.IsInf(s.Weight, 0) || s.Weight < 0 {
			problems = append(problems, allocationError(fmt.Sprintf("allocation[%d].weight", i), fmt.Sprintf("must be a finite number >= 0, got %v", s.Weight)))
			continue
		}
		anyPositive = anyPositive || s.Weight > 0
	}
	if len(problems) == 0 && !anyPositive {
		problems = append(problems, allocationError("allocation", "weights must not all be 0"))
	}
	return errors.Join(problems...)
}

// ValidateBucketCount checks bucketCount against [MinBucketCount, MaxBucketCount].
func ValidateBucketCount(bucketCount uint32) error {
	if bucketCount < MinBucketCount || bucketCount > MaxBucketCount {
		return &FieldError{
			Field:  "bucket_count",
			Reason: fmt.Sprintf("must be between %d and %d, got %d", MinBucketCount, MaxBucketCount, bucketCount),
			class:  ErrBucketCount,
		}
	}
	return nil
}

func allocationError(field, reason string) error {
	return &FieldError{Field: field, Reason: reason, class: ErrAllocation}
}
