package ingest

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/assignments"
	"github.com/expd/expd/database"
	"github.com/expd/expd/erasure"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/vocab"
)

// store is one database dialect's way to run the write path.
type store interface {
	// inTx runs fn in one transaction and commits when fn returns nil.
	inTx(ctx context.Context, fn func(tx groupTx) error) error
	// concurrency is the default number of group transactions in flight.
	concurrency() int
}

// storeOf is the write path's dialect of db.
func storeOf(db *gorm.DB) store {
	if database.IsPostgres(db) {
		return postgresStore{db: db}
	}
	return sqliteStore{db: db}
}

// groupTx is what the write path does inside a transaction: the events
// store's part (eventsTx) and the control plane's (controlTx). On
// PostgreSQL and SQLite one transaction holds both, so a group commits
// whole or not at all; an analytics engine that holds the events
// elsewhere (docs/scale.md, "Past one machine") splits them along this
// line, and docs/ingest.md ("What commits together") says what each part
// must keep true under retries.
type groupTx interface {
	eventsTx
	controlTx
}

// eventsTx is the events store's part of a group's write: the records
// results read (events and the scores stored beside them).
type eventsTx interface {
	// existing returns which of the org's event ids are already stored.
	existing(ctx context.Context, orgID string, eventIDs []string) (map[string]bool, error)
	// insert stores rows, skipping (org_id, event_id) already stored or
	// repeated in rows, and returns the keys of the rows stored now.
	insert(ctx context.Context, rows []EventRow) ([]eventKey, error)
	// markDays raises the late-event version of each (org, day), sorted
	// (daymarks.go).
	markDays(ctx context.Context, marks []dayMark) error
	// callDays returns the timestamps of the org's stored events among
	// eventIDs (the calls scores name), by id.
	callDays(ctx context.Context, orgID string, eventIDs []string) (map[string]time.Time, error)
	// upsertScores stores score rows (distinct keys, sorted: scores.Latest)
	// received at receivedAt and returns those it wrote.
	upsertScores(ctx context.Context, rows []scores.Row, receivedAt time.Time) ([]scores.Written, error)
	// existingScores returns which keys of rows have a stored score.
	existingScores(ctx context.Context, rows []scores.Row) (map[scores.Key]bool, error)
}

// controlTx is the part of a group's write that stays in the relational
// database whichever engine holds the events: the monthly usage and the
// first-exposure pins.
type controlTx interface {
	// lockUsage creates the month's usage rows of orgs (sorted, so two
	// transactions lock them in the same order) and returns each org's
	// month total, holding the lock of its slot-0 row (where orgs with an
	// allowance count) until the transaction ends.
	lockUsage(ctx context.Context, month string, orgs []string) (map[string]int64, error)
	// pin pins each (experiment, user) of the exposures among stored (the
	// rows stored now) to its earliest, unless pinned already
	// (docs/architecture.md §5).
	pin(ctx context.Context, stored []EventRow) error
	// addUsage raises the month's usage counters (deltas sorted by org).
	addUsage(ctx context.Context, month string, deltas []usageDelta) error
	// tombstones reads the org's erasure requests since a time (which
	// users were erased: erasure.Tombstones), in this transaction: on
	// SQLite the transaction holds the one connection.
	tombstones(ctx context.Context, orgID string, since time.Time) ([]erasure.Tombstone, error)
}

// eventKey is the primary key of the events table.
type eventKey struct{ orgID, eventID string }

func keyOf(e *EventRow) eventKey { return eventKey{e.OrgID, e.EventID} }

// storedRows are the rows whose key was stored now, each key once (its
// first row, the one insert stored).
func storedRows(rows []EventRow, inserted []eventKey) []EventRow {
	left := make(map[eventKey]bool, len(inserted))
	for _, k := range inserted {
		left[k] = true
	}
	out := make([]EventRow, 0, len(inserted))
	for i := range rows {
		if k := keyOf(&rows[i]); left[k] {
			delete(left, k)
			out = append(out, rows[i])
		}
	}
	return out
}

// firstExposures is the earliest exposure of each (experiment, user) of
// rows, in order of first appearance.
func firstExposures(rows []EventRow) []assignments.Pin {
	type pinKey struct{ experimentID, userID string }
	first := make(map[pinKey]int)
	var order []pinKey
	for i := range rows {
		r := &rows[i]
		if r.Type != vocab.TypeExposure {
			continue
		}
		k := pinKey{r.ExperimentID, r.UserID}
		j, seen := first[k]
		if !seen {
			order = append(order, k)
		}
		if !seen || r.Ts.Before(rows[j].Ts) {
			first[k] = i
		}
	}
	pins := make([]assignments.Pin, len(order))
	for n, k := range order {
		r := &rows[first[k]]
		pins[n] = assignments.Pin{OrgID: r.OrgID, ExperimentID: r.ExperimentID, UserID: r.UserID, Variant: r.Variant, Source: assignments.SourceExposure}
	}
	return pins
}
