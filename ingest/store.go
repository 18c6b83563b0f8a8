package ingest

import (
	"context"
	"time"

	"github.com/expd/expd/scores"
)

// store is one database dialect's way to run the write path.
type store interface {
	// inTx runs fn in one transaction and commits when fn returns nil.
	inTx(ctx context.Context, fn func(tx groupTx) error) error
	// concurrency is the default number of group transactions in flight.
	concurrency() int
}

// groupTx is what the write path does inside a transaction.
type groupTx interface {
	// lockUsage creates the month's usage rows of orgs (sorted, so two
	// transactions lock them in the same order) and returns each org's
	// month total, holding the lock of its slot-0 row (where orgs with an
	// allowance count) until the transaction ends.
	lockUsage(ctx context.Context, month string, orgs []string) (map[string]int64, error)
	// existing returns which of the org's event ids are already stored.
	existing(ctx context.Context, orgID string, eventIDs []string) (map[string]bool, error)
	// insert stores rows, skipping (org_id, event_id) already stored, pins
	// the first exposure of each (experiment, user), and returns how many
	// rows of each org were stored now, keyed by eventKey.
	insert(ctx context.Context, rows []EventRow) ([]eventKey, error)
	// upsertScores stores score rows (distinct keys, sorted: scores.Latest)
	// received at receivedAt and returns those it wrote.
	upsertScores(ctx context.Context, rows []scores.Row, receivedAt time.Time) ([]scores.Written, error)
	// existingScores returns which keys of rows have a stored score.
	existingScores(ctx context.Context, rows []scores.Row) (map[scores.Key]bool, error)
	// markDays raises the late-event version of each (org, day), sorted
	// (daymarks.go).
	markDays(ctx context.Context, marks []dayMark) error
	// addUsage raises the month's usage counters (deltas sorted by org).
	addUsage(ctx context.Context, month string, deltas []usageDelta) error
}

// eventKey is the primary key of the events table.
type eventKey struct{ orgID, eventID string }

func keyOf(e *EventRow) eventKey { return eventKey{e.OrgID, e.EventID} }
