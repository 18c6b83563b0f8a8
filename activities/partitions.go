package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/expd/expd/ingest"
)

// EnsurePartitionsInput names the days to cover: AsOf's day minus one
// through AheadDays after it.
type EnsurePartitionsInput struct {
	AsOf      time.Time
	AheadDays int
}

// EnsurePartitionsResult lists the days whose partitions were created now.
type EnsurePartitionsResult struct {
	Created []time.Time
}

// EnsureEventPartitions creates the events partitions of the coming days
// ahead of their traffic (never on the request path), and of any day the
// default partition caught rows of, moving those rows in. Days that exist
// are skipped, so a retry or a second run changes nothing.
func (a *Activities) EnsureEventPartitions(ctx context.Context, in EnsurePartitionsInput) (EnsurePartitionsResult, error) {
	created, err := ingest.EnsurePartitions(ctx, a.DB, in.AsOf.AddDate(0, 0, -1), in.AsOf.AddDate(0, 0, in.AheadDays))
	return EnsurePartitionsResult{Created: created}, err
}

// CompactDaysInput names the nightly's instant: the days that ended by
// AsOf's UTC day are compacted.
type CompactDaysInput struct {
	AsOf time.Time
}

// CompactDaysResult counts the (shard, day) partitions merged.
type CompactDaysResult struct {
	Merged int
}

// CompactEndedDays merges each ended day of the events store into one
// part where the store reads such days faster (ingest.DayCompactor:
// ClickHouse, whose runs then read the day without FINAL); other stores
// have nothing to do. A day already one part is skipped, so a retry
// merges what is left.
func (a *Activities) CompactEndedDays(ctx context.Context, in CompactDaysInput) (CompactDaysResult, error) {
	store, ok := a.events().(ingest.DayCompactor)
	if !ok {
		return CompactDaysResult{}, nil
	}
	n, err := store.CompactDays(ctx, ingest.DayOf(in.AsOf), func(merged int) { activity.RecordHeartbeat(ctx, merged) })
	return CompactDaysResult{Merged: n}, err
}
