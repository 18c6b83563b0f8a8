package bucketing_test

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/testdata/bucketing/vectors"
)

const vectorFile = "../testdata/bucketing/vectors.json"

func readVectors(t *testing.T) *vectors.File {
	t.Helper()
	f, err := vectors.Read(vectorFile)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestVectorBuckets(t *testing.T) {
	for i, c := range readVectors(t).BucketCases {
		if got := bucketing.Bucket(c.ExperimentID, c.Salt, c.UserID, c.BucketCount); got != c.Bucket {
			t.Errorf("bucket_cases[%d] %+v: Bucket = %d", i, c, got)
		}
	}
}

func TestVectorInitialMaps(t *testing.T) {
	for i, c := range readVectors(t).InitialMapCases {
		got, err := bucketing.InitialMap(c.Allocation, c.BucketCount)
		if err != nil || !slices.Equal(got, c.Map) {
			t.Errorf("initial_map_cases[%d]: InitialMap = %v, %v; want %v", i, got, err, c.Map)
		}
	}
}

func TestVectorRebalances(t *testing.T) {
	for i, c := range readVectors(t).RebalanceCases {
		got, err := bucketing.Rebalance(c.OldMap, c.Allocation, c.BucketCount)
		if err != nil || !slices.Equal(got, c.Map) {
			t.Errorf("rebalance_cases[%d]: Rebalance = %v, %v; want %v", i, got, err, c.Map)
		}
	}
}

func TestVectorLookups(t *testing.T) {
	for i, c := range readVectors(t).LookupCases {
		got, ok := c.Map.Lookup(c.Bucket)
		if ok != (c.Variant != nil) || (ok && got != *c.Variant) {
			t.Errorf("lookup_cases[%d] bucket %d: Lookup = %q, %v; want %v", i, c.Bucket, got, ok, c.Variant)
		}
	}
}

// TestVectorFileCoversTheEdges guards the file's promises to the SDKs: enough
// cases, both bucket_count bounds, non-ASCII and long ids, the null lookup.
func TestVectorFileCoversTheEdges(t *testing.T) {
	f := readVectors(t)
	if f.MinBucketCount != bucketing.MinBucketCount || f.MaxBucketCount != bucketing.MaxBucketCount {
		t.Errorf("file bounds [%d, %d], package bounds [%d, %d]", f.MinBucketCount, f.MaxBucketCount, bucketing.MinBucketCount, bucketing.MaxBucketCount)
	}
	if len(f.BucketCases) < 1000 {
		t.Errorf("%d bucket cases, want at least 1000", len(f.BucketCases))
	}
	has := func(pred func(vectors.BucketCase) bool) bool { return slices.ContainsFunc(f.BucketCases, pred) }
	edges := map[string]func(vectors.BucketCase) bool{
		"bucket_count 1":       func(c vectors.BucketCase) bool { return c.BucketCount == bucketing.MinBucketCount },
		"maximum bucket_count": func(c vectors.BucketCase) bool { return c.BucketCount == bucketing.MaxBucketCount },
		"non-ASCII user id":    func(c vectors.BucketCase) bool { return utf8.RuneCountInString(c.UserID) < len(c.UserID) },
		"emoji user id":        func(c vectors.BucketCase) bool { return strings.Contains(c.UserID, "😀") },
		"long user id":         func(c vectors.BucketCase) bool { return len(c.UserID) >= 1000 },
		"empty user id":        func(c vectors.BucketCase) bool { return c.UserID == "" },
	}
	for name, pred := range edges {
		if !has(pred) {
			t.Errorf("no bucket case with %s", name)
		}
	}
	if !slices.ContainsFunc(f.LookupCases, func(c vectors.LookupCase) bool { return c.Variant == nil }) {
		t.Error("no lookup case outside the map")
	}
	if len(f.InitialMapCases) == 0 || len(f.RebalanceCases) == 0 {
		t.Errorf("%d initial-map and %d rebalance cases, want some of each", len(f.InitialMapCases), len(f.RebalanceCases))
	}
}
