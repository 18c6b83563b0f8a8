package bucketing

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
)

// The properties, checked on 100,000 users rather than on buckets.
const (
	propertyUsers      = 100_000
	propertyBuckets    = 10_000
	propertyExperiment = "0b9d4c1e-8f3a-4c2b-9e61-7d2f5a8b3c10"
	propertySalt       = "k3J9x2pQ"
	shareTolerance     = 0.01
	moveShareTolerance = 0.01
)

// userBuckets is the bucket of each of the property users, computed once.
var userBuckets = sync.OnceValue(func() []uint32 {
	buckets := make([]uint32, propertyUsers)
	for i := range buckets {
		buckets[i] = Bucket(propertyExperiment, propertySalt, fmt.Sprintf("user-%d", i), propertyBuckets)
	}
	return buckets
})

func assign(t *testing.T, m Map) []string {
	t.Helper()
	variants := make([]string, propertyUsers)
	for i, b := range userBuckets() {
		v, ok := m.Lookup(b)
		if !ok {
			t.Fatalf("bucket %d of user-%d has no variant in %v", b, i, m)
		}
		variants[i] = v
	}
	return variants
}

func mustInitial(t *testing.T, alloc []Slice) Map {
	t.Helper()
	m, err := InitialMap(alloc, propertyBuckets)
	if err != nil {
		t.Fatalf("InitialMap(%v): %v", alloc, err)
	}
	return m
}

func mustRebalance(t *testing.T, old Map, alloc []Slice) Map {
	t.Helper()
	m, err := Rebalance(old, alloc, propertyBuckets)
	if err != nil {
		t.Fatalf("Rebalance(%v): %v", alloc, err)
	}
	return m
}

// moves counts users per (from, to) pair whose variant changed.
func moves(before, after []string) map[[2]string]int {
	moved := map[[2]string]int{}
	for i := range before {
		if before[i] != after[i] {
			moved[[2]string{before[i], after[i]}]++
		}
	}
	return moved
}

func TestPromptOnlyChangeMovesNoUser(t *testing.T) {
	// A version that changes only prompt text carries the same weights.
	alloc := slicesOf("control,concise", 50, 50)
	before := mustInitial(t, alloc)
	after := mustRebalance(t, before, alloc)
	if !slices.Equal(after, before) {
		t.Errorf("map changed from %v to %v", before, after)
	}
	if moved := moves(assign(t, before), assign(t, after)); len(moved) != 0 {
		t.Errorf("users moved: %v, want none", moved)
	}
}

func TestFiftyFiftyToSixtyFortyMovesTenPercentIntoTheGrowingArm(t *testing.T) {
	before := mustInitial(t, slicesOf("control,concise", 50, 50))
	after := mustRebalance(t, before, slicesOf("control,concise", 60, 40))
	moved := moves(assign(t, before), assign(t, after))
	if len(moved) != 1 || moved[[2]string{"concise", "control"}] == 0 {
		t.Fatalf("moves %v, want only concise -> control", moved)
	}
	if share := float64(moved[[2]string{"concise", "control"}]) / propertyUsers; math.Abs(share-0.10) > moveShareTolerance {
		t.Errorf("%.4f of users moved, want 0.10 ± %.2f", share, moveShareTolerance)
	}
}

func TestAddingAVariantMovesOnlyTheMinimumIntoIt(t *testing.T) {
	before := mustInitial(t, slicesOf("control,concise", 50, 50))
	alloc := slicesOf("control,concise,verbose", 34, 33, 33)
	after := mustRebalance(t, before, alloc)
	checkMinimalMove(t, before, alloc, propertyBuckets, after)

	moved := moves(assign(t, before), assign(t, after))
	total := 0
	for pair, n := range moved {
		if pair[1] != "verbose" {
			t.Errorf("%d users moved %s -> %s, want moves only into verbose", n, pair[0], pair[1])
		}
		total += n
	}
	// The minimum is sum(max(0, old_i - new_i)) = (5000-3400) + (5000-3300) buckets.
	minShare := float64(5000-3400+5000-3300) / propertyBuckets
	if share := float64(total) / propertyUsers; math.Abs(share-minShare) > moveShareTolerance {
		t.Errorf("%.4f of users moved, want %.2f ± %.2f", share, minShare, moveShareTolerance)
	}
}

func TestSharesLandWithinOnePercentOfWeights(t *testing.T) {
	versions := [][]Slice{
		slicesOf("control,concise", 50, 50),
		slicesOf("control,concise", 60, 40),
		slicesOf("control,concise,verbose", 34, 33, 33),
		slicesOf("control,verbose,terse", 10, 20, 70),
		slicesOf("terse,control", 1, 3),
	}
	// Walk the versions as one experiment would, so fragmented maps are
	// measured too.
	m := mustInitial(t, versions[0])
	for i, alloc := range versions {
		if i > 0 {
			m = mustRebalance(t, m, alloc)
		}
		perVariant := map[string]int{}
		for _, v := range assign(t, m) {
			perVariant[v]++
		}
		total := 0.0
		for _, s := range alloc {
			total += s.Weight
		}
		for _, s := range alloc {
			share, want := float64(perVariant[s.Variant])/propertyUsers, s.Weight/total
			if math.Abs(share-want) > shareTolerance {
				t.Errorf("version %d: %s has share %.4f, want %.4f ± %.2f", i+1, s.Variant, share, want, shareTolerance)
			}
		}
	}
}
