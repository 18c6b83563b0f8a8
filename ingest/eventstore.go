package ingest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/scores"
	"github.com/expd/expd/vocab"
)

// EventStore is where events live, apart from the write path's group
// commit: the seam of a second analytics engine (docs/scale.md, "Past one
// machine"). Pins, usage and everything else stay in the relational
// database whichever engine holds the events, and results read the
// events through results.Aggregator. An implementation must pass the
// conformance suite of results/enginetest.
type EventStore interface {
	// Insert stores rows (validated, ReceivedAt set) and returns how many
	// it stored now: a row whose (org_id, event_id) is stored already, or
	// repeated in rows, is stored once. Repeating an Insert stores nothing
	// twice.
	Insert(ctx context.Context, rows []EventRow) (int, error)
	// UpsertScores stores scores of model calls (validated) received at
	// receivedAt, with the write path's rule: one per (org, call, name,
	// source), the later timestamp wins (ties by arrival), an identical or
	// older one changes nothing; a score stored now for a call of a UTC
	// day that ended before receivedAt makes that day's rollups stale, as
	// a late event does (docs/quality.md, "Score metrics"). It returns how
	// many it stored now (new or replacing).
	UpsertScores(ctx context.Context, rows []scores.Row, receivedAt time.Time) (int, error)
	// ScoresOfCalls returns the stored scores of the org's calls among
	// callIDs, by call id, each call's sorted by name then source: one
	// per key, the one UpsertScores let win (the call explorer's read).
	ScoresOfCalls(ctx context.Context, orgID string, callIDs []string) (map[string][]scores.Row, error)
	// Read returns one experiment's events, newest first (ReadFilter).
	Read(ctx context.Context, f ReadFilter) ([]EventRow, error)
	// ReadCalls returns one experiment's model calls that pass f, newest
	// first, event_id breaking ties (the call explorer's keyset order).
	ReadCalls(ctx context.Context, f CallFilter) ([]EventRow, error)
	// ReadNewCalls returns model calls of the org in the order they were
	// received (received_at, then event_id), after a keyset position: what
	// online evaluators poll (NewCallsFilter).
	ReadNewCalls(ctx context.Context, f NewCallsFilter) ([]EventRow, error)
	// ReadCall returns one model call of the org by its event id; found
	// is false when there is none (never sent, or purged).
	ReadCall(ctx context.Context, orgID, eventID string) (row EventRow, found bool, err error)
	// ReadUser returns one user's events of the org, of every experiment,
	// oldest first.
	ReadUser(ctx context.Context, orgID, userID string) ([]EventRow, error)
	// ReadUserPage returns up to limit of one user's events of the org,
	// oldest first (ts, then event_id), after the keyset position
	// (AfterTs, AfterID); a zero position starts at the first. The export
	// streams a user page by page.
	ReadUserPage(ctx context.Context, orgID, userID string, after UserPosition, limit int) ([]EventRow, error)
	// PurgeBefore deletes up to about limit of the org's events stamped
	// before cutoff and returns how many; called until it returns less
	// than limit. A purged event's id may be stored again.
	PurgeBefore(ctx context.Context, orgID string, cutoff time.Time, limit int) (int64, error)
	// DeleteUser deletes every event of one user of the org (an erasure)
	// and returns how many.
	DeleteUser(ctx context.Context, orgID, userID string) (int64, error)
	// DeleteScores deletes the org's scores of the calls callIDs (the
	// model calls of an erased user) and returns how many.
	DeleteScores(ctx context.Context, orgID string, callIDs []string) (int64, error)
	// PurgeScoresBefore deletes the org's scores stamped before cutoff
	// (retention) and returns how many.
	PurgeScoresBefore(ctx context.Context, orgID string, cutoff time.Time) (int64, error)
}

// SQLEvents is the EventStore of expd's own database, PostgreSQL or
// SQLite. The Writer inserts through the same code inside its group
// transaction, with the pins and usage (store.go); Insert here is the
// events store's part of it alone.
type SQLEvents struct{ DB *gorm.DB }

var _ EventStore = SQLEvents{}

// Insert stores rows with the write path's dedup and late-day marks, in
// one transaction of its own.
func (s SQLEvents) Insert(ctx context.Context, rows []EventRow) (int, error) {
	rows = slices.Clone(rows) // the PostgreSQL insert sorts them
	var n int
	err := storeOf(s.DB).inTx(ctx, func(tx groupTx) error {
		inserted, err := insertMarked(ctx, tx, rows)
		n = len(inserted)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("insert %d events: %w", len(rows), err)
	}
	return n, nil
}

// UpsertScores is the write path's score upsert and late-day marks, in
// one transaction of its own.
func (s SQLEvents) UpsertScores(ctx context.Context, rows []scores.Row, receivedAt time.Time) (int, error) {
	kept, _ := scores.Latest(rows)
	var n int
	err := storeOf(s.DB).inTx(ctx, func(tx groupTx) error {
		written, err := tx.upsertScores(ctx, kept, receivedAt)
		if err != nil {
			return err
		}
		n = len(written)
		late, err := lateScoreDays(ctx, tx, written, receivedAt, map[dayMark]bool{})
		if err != nil {
			return err
		}
		return markLate(ctx, tx, late)
	})
	if err != nil {
		return 0, fmt.Errorf("upsert %d scores: %w", len(rows), err)
	}
	return n, nil
}

// ScoresOfCalls reads the scores table (its owner's query, scores.OfCalls).
func (s SQLEvents) ScoresOfCalls(ctx context.Context, orgID string, callIDs []string) (map[string][]scores.Row, error) {
	return scores.OfCalls(ctx, s.DB, orgID, callIDs)
}

// UserPosition is a keyset position in a user's events: after the event
// AfterID of time AfterTs; AfterID "" is the start.
type UserPosition struct {
	AfterTs time.Time
	AfterID string
}

// ReadUserPage is EventStore.ReadUserPage on the (org_id, user_id, ts)
// index.
func (s SQLEvents) ReadUserPage(ctx context.Context, orgID, userID string, after UserPosition, limit int) ([]EventRow, error) {
	q := s.DB.WithContext(ctx).Where("org_id = ? AND user_id = ?", orgID, userID)
	if after.AfterID != "" {
		q = q.Where("(ts > ? OR ts = ? AND event_id > ?)", after.AfterTs, after.AfterTs, after.AfterID)
	}
	var rows []EventRow
	if err := q.Order("ts, event_id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read a page of a user's events of org %s: %w", orgID, err)
	}
	return rows, nil
}

// DeleteScores deletes through the scores table's owner (scores.DeleteCalls).
func (s SQLEvents) DeleteScores(ctx context.Context, orgID string, callIDs []string) (int64, error) {
	return scores.DeleteCalls(ctx, s.DB, orgID, callIDs)
}

// PurgeScoresBefore deletes through the scores table's owner (scores.PurgeBefore).
func (s SQLEvents) PurgeScoresBefore(ctx context.Context, orgID string, cutoff time.Time) (int64, error) {
	return scores.PurgeBefore(ctx, s.DB, orgID, cutoff)
}

// ReadFilter selects an experiment's stored events; empty fields match all.
type ReadFilter struct {
	OrgID        string
	ExperimentID string
	Type         vocab.RecordType
	UserID       string
	Limit        int
}

// Read returns an experiment's stored events, newest first. event_id
// breaks ties between events of the same instant, so pages are stable.
func (s SQLEvents) Read(ctx context.Context, f ReadFilter) ([]EventRow, error) {
	q := s.DB.WithContext(ctx).Where("org_id = ? AND experiment_id = ?", f.OrgID, f.ExperimentID)
	if f.Type != "" {
		q = q.Where("type = ?", f.Type)
	}
	if f.UserID != "" {
		q = q.Where("user_id = ?", f.UserID)
	}
	var rows []EventRow
	if err := q.Order("ts DESC, event_id DESC").Limit(f.Limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return rows, nil
}

// ReadUser reads the user's events through the (org_id, user_id, ts)
// index.
func (s SQLEvents) ReadUser(ctx context.Context, orgID, userID string) ([]EventRow, error) {
	var rows []EventRow
	if err := s.DB.WithContext(ctx).Where("org_id = ? AND user_id = ?", orgID, userID).
		Order("ts, event_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read events of a user of org %s: %w", orgID, err)
	}
	return rows, nil
}
