package activities

import (
	"context"
	"time"

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
