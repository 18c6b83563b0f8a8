package bucketing

import (
	"errors"
	"maps"
	"slices"
	"testing"
)

// fragmented is a canonical map of 20 buckets whose variants recur.
var fragmented = Map{{"a", 0, 3}, {"b", 3, 4}, {"c", 4, 9}, {"a", 9, 10}, {"b", 10, 17}, {"c", 17, 20}}

func TestLookupMatchesLinearScan(t *testing.T) {
	for bucket := uint32(0); bucket < 25; bucket++ {
		wantVariant, wantOK := "", false
		for _, r := range fragmented {
			if r.Start <= bucket && bucket < r.End {
				wantVariant, wantOK = r.Variant, true
			}
		}
		if got, ok := fragmented.Lookup(bucket); got != wantVariant || ok != wantOK {
			t.Errorf("Lookup(%d) = %q, %v; want %q, %v", bucket, got, ok, wantVariant, wantOK)
		}
	}
}

func TestLookupInEmptyMapFindsNothing(t *testing.T) {
	if v, ok := Map(nil).Lookup(0); ok {
		t.Errorf("Lookup in an empty map = %q, true; want not found", v)
	}
}

func TestLookupDoesNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() { fragmented.Lookup(12) })
	if allocs != 0 {
		t.Errorf("Lookup allocates %.1f times per call, want 0", allocs)
	}
}

func TestCountsSumsRangesPerVariant(t *testing.T) {
	want := map[string]uint32{"a": 4, "b": 8, "c": 8}
	if got := fragmented.Counts(); !maps.Equal(got, want) {
		t.Errorf("Counts = %v, want %v", got, want)
	}
}

func TestValidateAcceptsCanonicalMap(t *testing.T) {
	if err := fragmented.Validate(20); err != nil {
		t.Errorf("Validate = %v, want nil", err)
	}
}

func TestValidateRejectsNonCanonicalMaps(t *testing.T) {
	tests := []struct {
		name        string
		m           Map
		bucketCount uint32
		fields      []string
	}{
		{"empty", nil, 10, []string{"map"}},
		{"gap", Map{{"a", 0, 4}, {"b", 5, 10}}, 10, []string{"map[1].start"}},
		{"overlap", Map{{"a", 0, 6}, {"b", 5, 10}}, 10, []string{"map[1].start"}},
		{"not starting at 0", Map{{"a", 1, 10}}, 10, []string{"map[0].start"}},
		{"short of bucket_count", Map{{"a", 0, 9}}, 10, []string{"map[0].end"}},
		{"past bucket_count", Map{{"a", 0, 11}}, 10, []string{"map[0].end"}},
		{"empty range", Map{{"a", 0, 5}, {"b", 5, 5}, {"c", 5, 10}}, 10, []string{"map[1].end"}},
		{"unmerged neighbours", Map{{"a", 0, 5}, {"a", 5, 10}}, 10, []string{"map[1].variant"}},
		{"empty variant", Map{{"", 0, 10}}, 10, []string{"map[0].variant"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.m.Validate(tt.bucketCount)
			if !errors.Is(err, ErrMap) {
				t.Fatalf("Validate = %v, want an ErrMap", err)
			}
			if got := fieldsOf(err); !slices.Equal(got, tt.fields) {
				t.Errorf("error names fields %v, want %v (error: %v)", got, tt.fields, err)
			}
		})
	}
}

func TestValidateRejectsBucketCountOutOfRange(t *testing.T) {
	if err := (Map{{"a", 0, MaxBucketCount + 1}}).Validate(MaxBucketCount + 1); !errors.Is(err, ErrBucketCount) {
		t.Errorf("Validate(MaxBucketCount+1) = %v, want an ErrBucketCount", err)
	}
}
