package bucketing

import (
	"maps"
	"testing"
)

// checkMinimalMove asserts every promise doc.go makes about Rebalance(old,
// alloc) == next, bucket by bucket: next is canonical with the
// largest-remainder counts; exactly sum(max(0, old_v - target_v)) buckets
// change hands, each from a shrinking variant to a growing one; a shrinking
// variant keeps its lowest buckets; freed buckets go in ascending order to
// growing variants in allocation order.
func checkMinimalMove(t *testing.T, old Map, alloc []Slice, bucketCount uint32, next Map) {
	t.Helper()
	if err := next.Validate(bucketCount); err != nil {
		t.Fatalf("rebalanced map is not canonical: %v", err)
	}
	oldCounts, newCounts := old.Counts(), next.Counts()
	targets := make(map[string]uint32, len(alloc))
	for i, c := range targetCounts(alloc, bucketCount) {
		if c > 0 {
			targets[alloc[i].Variant] = c
		}
	}
	if !maps.Equal(newCounts, targets) {
		t.Fatalf("counts %v, want largest-remainder targets %v", newCounts, targets)
	}
	wantMoves := uint32(0)
	for v, c := range oldCounts {
		wantMoves += c - min(c, targets[v])
	}

	// Walk buckets in ascending order: a shrinking variant's kept buckets
	// must all come before its freed ones, and the freed buckets must be
	// handed out in allocation order.
	moves := uint32(0)
	freedSeen := map[string]bool{}
	var receivers []string // variant of each moved bucket, ascending
	for b := range bucketCount {
		was, _ := old.Lookup(b)
		is, _ := next.Lookup(b)
		if was == is {
			if freedSeen[was] {
				t.Fatalf("bucket %d: %s keeps it after freeing a lower bucket", b, was)
			}
			continue
		}
		moves++
		freedSeen[was] = true
		if newCounts[was] >= oldCounts[was] {
			t.Fatalf("bucket %d moved out of %s, which does not shrink (%d -> %d)", b, was, oldCounts[was], newCounts[was])
		}
		if newCounts[is] <= oldCounts[is] {
			t.Fatalf("bucket %d moved into %s, which does not grow (%d -> %d)", b, is, oldCounts[is], newCounts[is])
		}
		receivers = append(receivers, is)
	}
	if moves != wantMoves {
		t.Fatalf("%d buckets moved, want the minimum %d", moves, wantMoves)
	}
	checkAllocationOrder(t, receivers, alloc)
}

// checkAllocationOrder asserts that receivers (one entry per freed bucket,
// ascending) name the growing variants as contiguous runs in allocation order.
func checkAllocationOrder(t *testing.T, receivers []string, alloc []Slice) {
	t.Helper()
	position := make(map[string]int, len(alloc))
	for i, s := range alloc {
		position[s.Variant] = i
	}
	for i := 1; i < len(receivers); i++ {
		if position[receivers[i]] < position[receivers[i-1]] {
			t.Fatalf("freed bucket #%d went to %s after #%d went to %s: not allocation order", i, receivers[i], i-1, receivers[i-1])
		}
	}
}
