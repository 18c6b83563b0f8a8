package bucketing

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestTargetCountsLargestRemainder(t *testing.T) {
	tests := []struct {
		name        string
		alloc       []Slice
		bucketCount uint32
		want        []uint32
	}{
		{"even split", slicesOf("a,b", 50, 50), 10000, []uint32{5000, 5000}},
		{"equal remainders go to the earlier slice", slicesOf("a,b,c", 1, 1, 1), 10, []uint32{4, 3, 3}},
		{"two leftovers, equal remainders", slicesOf("a,b,c", 1, 1, 1), 2, []uint32{1, 1, 0}},
		{"larger remainder beats earlier slice", slicesOf("a,b", 1, 2), 1, []uint32{0, 1}},
		{"2:1 rounds the larger share up", slicesOf("a,b", 2, 1), 10, []uint32{7, 3}},
		{"weight 0 gets nothing even with one bucket", slicesOf("a,b,c", 0, 0, 1), 1, []uint32{0, 0, 1}},
		{"tiny weight rounds to zero", slicesOf("a,b", 1e-300, 1), MaxBucketCount, []uint32{0, MaxBucketCount}},
		{"subnormal weights are exact", slicesOf("a,b", 5e-324, 5e-324), 1000, []uint32{500, 500}},
		{"huge weights do not overflow", slicesOf("a,b", 1e308, 1e308), 10, []uint32{5, 5}},
		// 0.1, 0.2 and 0.7 are not exact in binary; the exact rationals of
		// the float64 values still give 1:2:7 to within one bucket.
		{"inexact decimals", slicesOf("a,b,c", 0.1, 0.2, 0.7), MaxBucketCount, []uint32{100000, 200000, 700000}},
		{"more variants than buckets", slicesOf("a,b,c,d,e", 1, 1, 1, 1, 1), 3, []uint32{1, 1, 1, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := targetCounts(tt.alloc, tt.bucketCount); !slices.Equal(got, tt.want) {
				t.Errorf("targetCounts = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestValidateAllocationRejectsBadInput(t *testing.T) {
	tests := []struct {
		name   string
		alloc  []Slice
		fields []string // every field the error must name
	}{
		{"empty", nil, []string{"allocation"}},
		{"empty variant", []Slice{{"", 1}}, []string{"allocation[0].variant"}},
		{"duplicate", slicesOf("a,b,a", 1, 1, 1), []string{"allocation[2].variant"}},
		{"negative", slicesOf("a,b", 1, -1), []string{"allocation[1].weight"}},
		{"NaN", slicesOf("a", math.NaN()), []string{"allocation[0].weight"}},
		{"infinite", slicesOf("a,b", math.Inf(1), 1), []string{"allocation[0].weight"}},
		{"all zero", slicesOf("a,b", 0, 0), []string{"allocation"}},
		{"several problems at once", []Slice{{"", -1}, {"b", math.NaN()}}, []string{"allocation[0].variant", "allocation[0].weight", "allocation[1].weight"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateAllocation(tt.alloc)
			if !errors.Is(err, ErrAllocation) {
				t.Fatalf("ValidateAllocation = %v, want an ErrAllocation", err)
			}
			if got := fieldsOf(err); !slices.Equal(got, tt.fields) {
				t.Errorf("error names fields %v, want %v (error: %v)", got, tt.fields, err)
			}
		})
	}
}

func TestValidateAllocationAcceptsZeroWeightsBesidePositiveOnes(t *testing.T) {
	if err := ValidateAllocation(slicesOf("a,b", 0, 1)); err != nil {
		t.Errorf("ValidateAllocation(0, 1) = %v, want nil", err)
	}
}

func TestValidateBucketCountBounds(t *testing.T) {
	for n, wantOK := range map[uint32]bool{0: false, MinBucketCount: true, MaxBucketCount: true, MaxBucketCount + 1: false} {
		err := ValidateBucketCount(n)
		if (err == nil) != wantOK || (err != nil && !errors.Is(err, ErrBucketCount)) {
			t.Errorf("ValidateBucketCount(%d) = %v, want ok=%v", n, err, wantOK)
		}
	}
}

// fieldsOf lists the fields named by err, in order.
func fieldsOf(err error) []string {
	var fields []string
	for _, fe := range FieldErrors(err) {
		fields = append(fields, fe.Field)
	}
	return fields
}
