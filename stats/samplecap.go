package stats

import (
	"cmp"
	"hash/fnv"
	"slices"
)

// SampleCap picks at most limit users deterministically: those whose user-id
// hash is smallest, so the same users are kept on every run whatever order
// they arrive in. keep holds indices into userIDs in ascending order; capped
// reports whether any user was dropped. limit < 1 means no cap.
func SampleCap(userIDs []string, limit int) (keep []int, capped bool) {
	if limit < 1 || len(userIDs) <= limit {
		keep = make([]int, len(userIDs))
		for i := range keep {
			keep[i] = i
		}
		return keep, false
	}
	type ranked struct {
		hash  uint64
		index int
	}
	ranks := make([]ranked, len(userIDs))
	for i, id := range userIDs {
		ranks[i] = ranked{hash: userHash(id), index: i}
	}
	slices.SortFunc(ranks, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.hash, b.hash),
			cmp.Compare(userIDs[a.index], userIDs[b.index]), cmp.Compare(a.index, b.index))
	})
	keep = make([]int, limit)
	for i := range keep {
		keep[i] = ranks[i].index
	}
	slices.Sort(keep)
	return keep, true
}

// userHash is FNV-1a of the id, scrambled so that ids differing in a last
// character do not land next to each other in hash order.
func userHash(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return splitmix64(h.Sum64())
}
