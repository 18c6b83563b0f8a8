package bucketing

import (
	"errors"
	"slices"
	"testing"
)

func TestRebalanceExamples(t *testing.T) {
	tests := []struct {
		name        string
		old         Map
		alloc       []Slice
		bucketCount uint32
		want        Map
	}{
		{
			name: "same weights keep the map", bucketCount: 20,
			old: fragmented, alloc: slicesOf("a,b,c", 4, 8, 8), want: fragmented,
		},
		{
			name: "scaled weights keep the map", bucketCount: 20,
			old: fragmented, alloc: slicesOf("c,b,a", 0.4, 0.4, 0.2), want: fragmented,
		},
		{
			name: "shrinking variant frees its highest bucket", bucketCount: 10,
			old: Map{{"a", 0, 5}, {"b", 5, 10}}, alloc: slicesOf("a,b", 60, 40),
			want: Map{{"a", 0, 5}, {"b", 5, 9}, {"a", 9, 10}},
		},
		{
			name: "new variant takes freed buckets in ascending order", bucketCount: 10,
			old: Map{{"a", 0, 5}, {"b", 5, 10}}, alloc: slicesOf("a,b,c", 40, 40, 20),
			want: Map{{"a", 0, 4}, {"c", 4, 5}, {"b", 5, 9}, {"c", 9, 10}},
		},
		{
			name: "growing variants take freed buckets in allocation order", bucketCount: 10,
			old: Map{{"a", 0, 10}}, alloc: slicesOf("c,a,b", 3, 5, 2),
			want: Map{{"a", 0, 5}, {"c", 5, 8}, {"b", 8, 10}},
		},
		{
			name: "removed variant frees all its buckets", bucketCount: 9,
			old: Map{{"a", 0, 3}, {"b", 3, 6}, {"c", 6, 9}}, alloc: slicesOf("a,c", 1, 1),
			// Targets a=5 (the tie goes to the earlier slice), c=4: b's
			// buckets 3, 4 go to a, then 5 to c.
			want: Map{{"a", 0, 5}, {"c", 5, 9}},
		},
		{
			name: "weight 0 empties a variant", bucketCount: 10,
			old: Map{{"a", 0, 5}, {"b", 5, 10}}, alloc: slicesOf("a,b", 1, 0),
			want: Map{{"a", 0, 10}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Rebalance(tt.old, tt.alloc, tt.bucketCount)
			if err != nil {
				t.Fatalf("Rebalance: %v", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Rebalance = %v, want %v", got, tt.want)
			}
			checkMinimalMove(t, tt.old, tt.alloc, tt.bucketCount, got)
		})
	}
}

func TestRebalanceRejectsBadInput(t *testing.T) {
	valid := Map{{"a", 0, 5}, {"b", 5, 10}}
	tests := []struct {
		name        string
		old         Map
		alloc       []Slice
		bucketCount uint32
		class       error
	}{
		{"bucket_count changed", valid, slicesOf("a,b", 1, 1), 11, ErrMap},
		{"bucket_count out of range", valid, slicesOf("a,b", 1, 1), 0, ErrBucketCount},
		{"non-canonical old map", Map{{"a", 0, 5}, {"a", 5, 10}}, slicesOf("a", 1), 10, ErrMap},
		{"bad allocation", valid, slicesOf("a,b", 1, -1), 10, ErrAllocation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if m, err := Rebalance(tt.old, tt.alloc, tt.bucketCount); !errors.Is(err, tt.class) || m != nil {
				t.Errorf("Rebalance = %v, %v; want nil, %v", m, err, tt.class)
			}
		})
	}
}
