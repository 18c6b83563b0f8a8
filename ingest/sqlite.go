package ingest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/assignments"
	"github.com/expd/expd/erasure"
	"github.com/expd/expd/scores"
)

// sqliteStore runs the write path with multi-row INSERTs: SQLite has one
// writer and no COPY, and a statement of many rows costs little more
// than one of a single row.
type sqliteStore struct{ db *gorm.DB }

func (sqliteStore) concurrency() int { return 1 }

func (s sqliteStore) inTx(ctx context.Context, fn func(tx groupTx) error) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return fn(sqliteTx{tx: tx}) })
}

type sqliteTx struct{ tx *gorm.DB }

func (s sqliteTx) tombstones(ctx context.Context, orgID string, since time.Time) ([]erasure.Tombstone, error) {
	return erasure.Recent(ctx, s.tx, orgID, since)
}

// sqliteRowsPerStatement keeps a statement's parameters (one per event
// column, 22 today) under SQLite's limit of 32,766.
const sqliteRowsPerStatement = 500

var rowPlaceholders = "(" + strings.TrimSuffix(strings.Repeat("?, ", len(EventColumns)), ", ") + ")"

func (s sqliteTx) lockUsage(ctx context.Context, month string, orgs []string) (map[string]int64, error) {
	values := strings.TrimSuffix(strings.Repeat("(?, ?, 0), ", len(orgs)), ", ")
	args := make([]any, 0, 2*len(orgs))
	for _, org := range orgs {
		args = append(args, org, month)
	}
	// The writer lock SQLite takes for this upsert is held to commit.
	rows, err := s.tx.Raw(`INSERT INTO event_usage (org_id, month, events) VALUES `+values+
		` ON CONFLICT (org_id, month) DO UPDATE SET events = event_usage.events RETURNING org_id, events`, args...).Rows()
	if err != nil {
		return nil, fmt.Errorf("lock usage: %w", err)
	}
	defer rows.Close()
	out := make(map[string]int64)
	for rows.Next() {
		var org string
		var n int64
		if err := rows.Scan(&org, &n); err != nil {
			return nil, fmt.Errorf("read usage: %w", err)
		}
		out[org] = n
	}
	return out, rows.Err()
}

func (s sqliteTx) existing(ctx context.Context, orgID string, eventIDs []string) (map[string]bool, error) {
	out := make(map[string]bool)
	for chunk := range slices.Chunk(eventIDs, sqliteRowsPerStatement) {
		var found []string
		err := s.tx.Table("events").Where("org_id = ? AND event_id IN ?", orgID, chunk).Pluck("event_id", &found).Error
		if err != nil {
			return nil, fmt.Errorf("find stored events: %w", err)
		}
		for _, id := range found {
			out[id] = true
		}
	}
	return out, nil
}

func (s sqliteTx) callDays(ctx context.Context, orgID string, eventIDs []string) (map[string]time.Time, error) {
	out := make(map[string]time.Time)
	for chunk := range slices.Chunk(eventIDs, sqliteRowsPerStatement) {
		var found []struct {
			EventID string
			Ts      time.Time
		}
		err := s.tx.WithContext(ctx).Table("events").Select("event_id, ts").Where("org_id = ? AND event_id IN ?", orgID, chunk).Scan(&found).Error
		if err != nil {
			return nil, fmt.Errorf("find scored calls: %w", err)
		}
		for _, f := range found {
			out[f.EventID] = f.Ts
		}
	}
	return out, nil
}

func (s sqliteTx) insert(ctx context.Context, rows []EventRow) ([]eventKey, error) {
	var inserted []eventKey
	for chunk := range slices.Chunk(rows, sqliteRowsPerStatement) {
		keys, err := s.insertChunk(chunk)
		if err != nil {
			return nil, err
		}
		inserted = append(inserted, keys...)
	}
	return inserted, nil
}

func (s sqliteTx) pin(ctx context.Context, stored []EventRow) error {
	return assignments.PinFirst(ctx, s.tx, firstExposures(stored))
}

func (s sqliteTx) insertChunk(chunk []EventRow) ([]eventKey, error) {
	args := make([]any, 0, len(chunk)*len(EventColumns))
	for i := range chunk {
		args = AppendEventValues(args, &chunk[i], chunk[i].OrgID, chunk[i].ExperimentID)
	}
	values := strings.TrimSuffix(strings.Repeat(rowPlaceholders+", ", len(chunk)), ", ")
	// OR IGNORE rather than ON CONFLICT DO NOTHING: no constraint can
	// abort the statement half-way, so SQLite writes no statement journal
	// (a temporary file) for it; the rows are validated already.
	res, err := s.tx.Raw(`INSERT OR IGNORE INTO events (`+columnList+`) VALUES `+values+
		` RETURNING org_id, event_id`, args...).Rows()
	if err != nil {
		return nil, fmt.Errorf("insert events: %w", err)
	}
	defer res.Close()
	keys := make([]eventKey, 0, len(chunk))
	for res.Next() {
		var k eventKey
		if err := res.Scan(&k.orgID, &k.eventID); err != nil {
			return nil, fmt.Errorf("read inserted events: %w", err)
		}
		keys = append(keys, k)
	}
	return keys, res.Err()
}

// addUsage adds into the org's one row of the month: SQLite has no slots
// (one writer at a time, so no queue on the row to avoid).
func (s sqliteTx) addUsage(ctx context.Context, month string, deltas []usageDelta) error {
	for _, d := range deltas {
		err := s.tx.Exec(`INSERT INTO event_usage (org_id, month, events) VALUES (?, ?, ?)
ON CONFLICT (org_id, month) DO UPDATE SET events = event_usage.events + excluded.events`, d.orgID, month, d.events).Error
		if err != nil {
			return fmt.Errorf("add usage: %w", err)
		}
	}
	return nil
}

func (s sqliteTx) upsertScores(ctx context.Context, rows []scores.Row, receivedAt time.Time) ([]scores.Written, error) {
	return scores.UpsertSQLite(ctx, s.tx, rows, receivedAt)
}

func (s sqliteTx) existingScores(ctx context.Context, rows []scores.Row) (map[scores.Key]bool, error) {
	return scores.ExistingSQLite(ctx, s.tx, rows)
}
