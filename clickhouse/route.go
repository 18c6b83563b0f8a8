package clickhouse

import (
	"github.com/go-faster/city"
)

// The write path inserts each shard's rows into its local tables itself,
// in parallel, instead of through the Distributed table (which receives
// the whole block on one node, splits it and forwards each shard's part:
// an extra hop and part per insert, docs/scale.md "Write path"). So the
// shard of a row is computed here exactly as the Distributed tables
// compute it: the sharding key cityHash64(org_id, user_id) of migration
// 0001, modulo the shards' total weight, through the slots of
// system.clusters' shard_weight. TestRoutingMatchesTheDistributedTable
// holds this to the server's choice.

// shardKey is ClickHouse's cityHash64(orgID, userID): CityHash64 v1.0.2
// of each argument, combined left to right with Hash128to64.
func shardKey(orgID, userID string) uint64 {
	return hash128to64(city.CH64([]byte(orgID)), city.CH64([]byte(userID)))
}

// hash128to64 is CityHash's Hash128to64 of the pair (low, high), how
// ClickHouse combines the hashes of a hash function's arguments.
func hash128to64(low, high uint64) uint64 {
	const mul = 0x9ddfea08eb382d69
	a := (low ^ high) * mul
	a ^= a >> 47
	b := (high ^ a) * mul
	b ^= b >> 47
	return b * mul
}

// slotsOf maps a key modulo the total weight to a shard index, as the
// Distributed engine does: shard i takes weights[i] consecutive slots,
// in the cluster's shard order. A shard of weight 0 takes no slot.
func slotsOf(weights []uint32) []int {
	var slots []int
	for i, w := range weights {
		for range w {
			slots = append(slots, i)
		}
	}
	return slots
}

// shardOf is the index (in s.shards) of the shard holding the events
// and claims of (orgID, userID).
func (s *Store) shardOf(orgID, userID string) int {
	if len(s.slots) <= 1 {
		return 0
	}
	return s.slots[shardKey(orgID, userID)%uint64(len(s.slots))]
}
