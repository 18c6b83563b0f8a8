package stats

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func userIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("user-%d", i)
	}
	return ids
}

func keptIDs(ids []string, keep []int) []string {
	out := make([]string, len(keep))
	for i, k := range keep {
		out[i] = ids[k]
	}
	slices.Sort(out)
	return out
}

func TestSampleCapUnderLimitKeepsAll(t *testing.T) {
	for _, limit := range []int{0, 5, 100} {
		keep, capped := SampleCap(userIDs(5), limit)
		if capped || !slices.Equal(keep, []int{0, 1, 2, 3, 4}) {
			t.Errorf("limit %d: keep %v, capped %v", limit, keep, capped)
		}
	}
}

func TestSampleCapIsDeterministicByUser(t *testing.T) {
	ids := userIDs(1000)
	keep, capped := SampleCap(ids, 100)
	if !capped || len(keep) != 100 || !slices.IsSorted(keep) {
		t.Fatalf("capped %v, %d kept, sorted %v", capped, len(keep), slices.IsSorted(keep))
	}
	shuffled := slices.Clone(ids)
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	again, _ := SampleCap(shuffled, 100)
	if !slices.Equal(keptIDs(ids, keep), keptIDs(shuffled, again)) {
		t.Error("a different input order kept different users")
	}
	smaller, _ := SampleCap(ids, 50)
	kept := keptIDs(ids, keep)
	for _, id := range keptIDs(ids, smaller) {
		if _, found := slices.BinarySearch(kept, id); !found {
			t.Errorf("%s kept at limit 50 but not at 100", id)
		}
	}
}

// TestSampleCapIsNotBiasedByPosition checks the kept users are spread over
// the input rather than taken from one end.
func TestSampleCapIsNotBiasedByPosition(t *testing.T) {
	keep, _ := SampleCap(userIDs(10000), 1000)
	firstHalf := 0
	for _, k := range keep {
		if k < 5000 {
			firstHalf++
		}
	}
	if firstHalf < 430 || firstHalf > 570 { // binomial(1000, 0.5) ± 4.4 SD
		t.Errorf("%d of 1000 kept users come from the first half", firstHalf)
	}
}
