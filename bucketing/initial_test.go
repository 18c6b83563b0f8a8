package bucketing

import (
	"errors"
	"slices"
	"testing"
)

func TestInitialMapLaysOutCountsInAllocationOrder(t *testing.T) {
	tests := []struct {
		name        string
		alloc       []Slice
		bucketCount uint32
		want        Map
	}{
		{"50/50", slicesOf("control,concise", 50, 50), 10000, Map{{"control", 0, 5000}, {"concise", 5000, 10000}}},
		{"allocation order, not name order", slicesOf("b,a", 2, 1), 10, Map{{"b", 0, 7}, {"a", 7, 10}}},
		{"zero-bucket variants are left out", slicesOf("a,b,c", 1, 0, 1), 10, Map{{"a", 0, 5}, {"c", 5, 10}}},
		{"one bucket", slicesOf("a,b", 1, 1), 1, Map{{"a", 0, 1}}},
		{"maximum bucket count", slicesOf("a", 1), MaxBucketCount, Map{{"a", 0, MaxBucketCount}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := InitialMap(tt.alloc, tt.bucketCount)
			if err != nil {
				t.Fatalf("InitialMap: %v", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("InitialMap = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestInitialMapRejectsBadInput(t *testing.T) {
	tests := []struct {
		name        string
		alloc       []Slice
		bucketCount uint32
		class       error
		field       string
	}{
		{"bucket count 0", slicesOf("a", 1), 0, ErrBucketCount, "bucket_count"},
		{"bucket count above maximum", slicesOf("a", 1), MaxBucketCount + 1, ErrBucketCount, "bucket_count"},
		{"bad allocation", slicesOf("a,a", 1, 1), 10, ErrAllocation, "allocation[1].variant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := InitialMap(tt.alloc, tt.bucketCount)
			if !errors.Is(err, tt.class) || m != nil {
				t.Fatalf("InitialMap = %v, %v; want nil, %v", m, err, tt.class)
			}
			if got := fieldsOf(err); !slices.Equal(got, []string{tt.field}) {
				t.Errorf("error names fields %v, want [%s]", got, tt.field)
			}
		})
	}
}
