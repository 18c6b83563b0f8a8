package ingest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"

	"github.com/expd/expd/assignments"
	"github.com/expd/expd/database"
	"github.com/expd/expd/erasure"
	"github.com/expd/expd/scores"
)

// postgresStore runs the write path on a raw pgx connection borrowed from
// GORM's pool (database/sql's Conn.Raw), so COPY and the statements around
// it share one transaction and no second pool has to be sized.
type postgresStore struct{ db *gorm.DB }

func (postgresStore) concurrency() int { return 4 }

func (s postgresStore) inTx(ctx context.Context, fn func(tx groupTx) error) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("get connection: %w", err)
	}
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		sc, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres driver connection is %T, want pgx stdlib", driverConn)
		}
		tx, err := sc.Conn().Begin(ctx)
		if err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		if err := fn(&pgTx{tx: tx}); err != nil {
			_ = tx.Rollback(ctx)
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		return nil
	})
}

type pgTx struct{ tx pgx.Tx }

func (t *pgTx) tombstones(ctx context.Context, orgID string, since time.Time) ([]erasure.Tombstone, error) {
	return erasure.RecentPgx(ctx, t.tx, orgID, since)
}

const (
	// claimIDs stores each (org_id, event_id) once (docs/partitions.md):
	// the ids it returns are the rows to store now, every other one is a
	// duplicate of a stored event or of a concurrent transaction's.
	claimIDs = `INSERT INTO event_ids (org_id, event_id, ts)
SELECT o::uuid, e, t FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS u(o, e, t)
ON CONFLICT (org_id, event_id) DO NOTHING RETURNING org_id::text, event_id`
	// pinExposures pins (experiment, user) to the variant of its first
	// exposure unless a pin exists already (docs/architecture.md §5).
	pinExposures = `INSERT INTO assignments (org_id, experiment_id, user_id, variant, source, created_at)
SELECT o::uuid, x::uuid, u, v, '` + assignments.SourceExposure + `', $5 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS p(o, x, u, v)
ON CONFLICT (experiment_id, user_id) DO NOTHING`
)

// lockUsage locks each org's slot-0 row of the month (creating it), then
// reads the month's total over all slots in a new statement, so it sees
// what the transactions it waited for committed.
func (p *pgTx) lockUsage(ctx context.Context, month string, orgs []string) (map[string]int64, error) {
	if _, err := p.tx.Exec(ctx, `INSERT INTO event_usage (org_id, month, slot, events)
SELECT o::uuid, $2, 0, 0 FROM unnest($1::text[]) AS o
ON CONFLICT (org_id, month, slot) DO UPDATE SET events = event_usage.events`, orgs, month); err != nil {
		return nil, fmt.Errorf("lock usage: %w", err)
	}
	rows, err := p.tx.Query(ctx, `SELECT org_id::text, sum(events)::bigint FROM event_usage
WHERE org_id = ANY($1::uuid[]) AND month = $2 GROUP BY org_id`, orgs, month)
	if err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	return collectUsage(rows)
}

func collectUsage(rows pgx.Rows) (map[string]int64, error) {
	out := make(map[string]int64)
	var org string
	var n int64
	_, err := pgx.ForEachRow(rows, []any{&org, &n}, func() error {
		out[org] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	return out, nil
}

func (p *pgTx) existing(ctx context.Context, orgID string, eventIDs []string) (map[string]bool, error) {
	rows, err := p.tx.Query(ctx, `SELECT event_id FROM event_ids WHERE org_id = $1 AND event_id = ANY($2::text[])`, orgID, eventIDs)
	if err != nil {
		return nil, fmt.Errorf("find stored events: %w", err)
	}
	out := make(map[string]bool)
	var id string
	if _, err := pgx.ForEachRow(rows, []any{&id}, func() error { out[id] = true; return nil }); err != nil {
		return nil, fmt.Errorf("find stored events: %w", err)
	}
	return out, nil
}

func (p *pgTx) callDays(ctx context.Context, orgID string, eventIDs []string) (map[string]time.Time, error) {
	rows, err := p.tx.Query(ctx, `SELECT event_id, ts FROM event_ids WHERE org_id = $1 AND event_id = ANY($2::text[])`, orgID, eventIDs)
	if err != nil {
		return nil, fmt.Errorf("find scored calls: %w", err)
	}
	out := make(map[string]time.Time)
	var id string
	var ts time.Time
	if _, err := pgx.ForEachRow(rows, []any{&id, &ts}, func() error { out[id] = ts; return nil }); err != nil {
		return nil, fmt.Errorf("find scored calls: %w", err)
	}
	return out, nil
}

// insert claims the rows' ids in event_ids and COPYs the rows whose id
// was free straight into events (into their day's partition). Rows go in
// sorted by key, so two transactions holding the
// same ids (a retry racing its original) wait for each other instead of
// deadlocking.
func (p *pgTx) insert(ctx context.Context, rows []EventRow) ([]eventKey, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	slices.SortFunc(rows, func(a, b EventRow) int {
		return cmp.Or(strings.Compare(a.OrgID, b.OrgID), strings.Compare(a.EventID, b.EventID))
	})
	fresh, err := p.claim(ctx, rows)
	if err != nil || len(fresh) == 0 {
		return nil, err
	}
	if _, err := CopyEvents(ctx, p.tx, fresh); err != nil {
		return nil, err
	}
	inserted := make([]eventKey, len(fresh))
	for i := range fresh {
		inserted[i] = keyOf(&fresh[i])
	}
	return inserted, nil
}

// claim stores the ids of rows (sorted by key) in event_ids and returns
// the rows whose id it stored. Most groups hold no duplicate, so it first
// COPYs every id (in a savepoint: about two thirds of the cost of the
// INSERT ... ON CONFLICT per row, docs/ingest.md "Benchmark"); only when
// that hits a unique violation (a retry, a spill replay, a key repeated in
// rows) does it roll the savepoint back and claim with ON CONFLICT DO
// NOTHING.
func (p *pgTx) claim(ctx context.Context, rows []EventRow) ([]EventRow, error) {
	sp, err := p.tx.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("savepoint: %w", err)
	}
	_, err = sp.CopyFrom(ctx, pgx.Identifier{"event_ids"}, []string{"org_id", "event_id", "ts"}, idSource(rows))
	switch {
	case err == nil:
		if err := sp.Commit(ctx); err != nil { // RELEASE SAVEPOINT
			return nil, fmt.Errorf("release savepoint: %w", err)
		}
		return rows, nil
	case database.IsUniqueViolation(err):
		if err := sp.Rollback(ctx); err != nil {
			return nil, fmt.Errorf("roll back to savepoint: %w", err)
		}
	default:
		return nil, fmt.Errorf("copy event ids: %w", err)
	}
	orgs, ids, ts := make([]string, len(rows)), make([]string, len(rows)), make([]time.Time, len(rows))
	for i := range rows {
		orgs[i], ids[i], ts[i] = rows[i].OrgID, rows[i].EventID, rows[i].Ts
	}
	res, err := p.tx.Query(ctx, claimIDs, orgs, ids, ts)
	if err != nil {
		return nil, fmt.Errorf("claim event ids: %w", err)
	}
	claimed := make(map[eventKey]bool, len(rows))
	var k eventKey
	if _, err := pgx.ForEachRow(res, []any{&k.orgID, &k.eventID}, func() error {
		claimed[k] = true
		return nil
	}); err != nil {
		return nil, fmt.Errorf("claim event ids: %w", err)
	}
	fresh := make([]EventRow, 0, len(claimed))
	for i := range rows {
		// A key repeated in rows (an import's repeated line) is
		// stored once: its later copies find the claim used up.
		if k := keyOf(&rows[i]); claimed[k] {
			delete(claimed, k)
			fresh = append(fresh, rows[i])
		}
	}
	return fresh, nil
}

// idSource feeds rows' keys to COPY into event_ids.
func idSource(rows []EventRow) pgx.CopyFromSource {
	ids := uuidBytes{}
	return pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
		org, err := ids.parse(rows[i].OrgID)
		if err != nil {
			return nil, err
		}
		return []any{org, rows[i].EventID, rows[i].Ts}, nil
	})
}

// uuidBytes parses uuids into [16]byte, which pgx encodes directly (a
// uuid.UUID would go through its driver.Valuer, several times slower),
// once per distinct string.
type uuidBytes map[string][16]byte

func (ids uuidBytes) parse(s string) ([16]byte, error) {
	if u, ok := ids[s]; ok {
		return u, nil
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return u, fmt.Errorf("uuid %q: %w", s, err)
	}
	ids[s] = u
	return u, nil
}

// pin pins each (experiment, user) of stored's exposures to its earliest,
// in (experiment, user) order so concurrent groups lock pins alike.
func (p *pgTx) pin(ctx context.Context, stored []EventRow) error {
	pins := firstExposures(stored)
	if len(pins) == 0 {
		return nil
	}
	slices.SortFunc(pins, func(a, b assignments.Pin) int {
		return cmp.Or(strings.Compare(a.ExperimentID, b.ExperimentID), strings.Compare(a.UserID, b.UserID))
	})
	var orgs, exps, users, variants []string
	for _, e := range pins {
		orgs, exps, users, variants = append(orgs, e.OrgID), append(exps, e.ExperimentID), append(users, e.UserID), append(variants, e.Variant)
	}
	if _, err := p.tx.Exec(ctx, pinExposures, orgs, exps, users, variants, stored[0].ReceivedAt); err != nil {
		return fmt.Errorf("pin exposures: %w", err)
	}
	return nil
}

// copySource feeds rows to COPY, their uuids parsed up front (uuidBytes).
// CopyEvents COPYs rows into events (each into its day's partition), the
// columns and values the write path stores, with no checks: the caller
// has claimed their ids. bench/ingest's baseline uses it too, so both
// write the same bytes.
func CopyEvents(ctx context.Context, tx pgx.Tx, rows []EventRow) (int64, error) {
	ids := uuidBytes{}
	for i := range rows {
		if _, err := ids.parse(rows[i].OrgID); err != nil {
			return 0, err
		}
		if _, err := ids.parse(rows[i].ExperimentID); err != nil {
			return 0, err
		}
	}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"events"}, EventColumns, pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
		r := &rows[i]
		return AppendEventValues(make([]any, 0, len(EventColumns)), r, ids[r.OrgID], ids[r.ExperimentID]), nil
	}))
	if err != nil {
		return 0, fmt.Errorf("copy events: %w", err)
	}
	return n, nil
}

func (p *pgTx) addUsage(ctx context.Context, month string, deltas []usageDelta) error {
	if len(deltas) == 0 {
		return nil
	}
	orgs, slots, counts := make([]string, len(deltas)), make([]int16, len(deltas)), make([]int64, len(deltas))
	for i, d := range deltas {
		orgs[i], slots[i], counts[i] = d.orgID, int16(d.slot), d.events
	}
	_, err := p.tx.Exec(ctx, `INSERT INTO event_usage (org_id, month, slot, events)
SELECT o::uuid, $2, s, n FROM unnest($1::text[], $3::smallint[], $4::bigint[]) AS t(o, s, n)
ON CONFLICT (org_id, month, slot) DO UPDATE SET events = event_usage.events + excluded.events`, orgs, month, slots, counts)
	if err != nil {
		return fmt.Errorf("add usage: %w", err)
	}
	return nil
}

func (p *pgTx) upsertScores(ctx context.Context, rows []scores.Row, receivedAt time.Time) ([]scores.Written, error) {
	return scores.UpsertPostgres(ctx, p.tx, rows, receivedAt)
}

func (p *pgTx) existingScores(ctx context.Context, rows []scores.Row) (map[scores.Key]bool, error) {
	return scores.ExistingPostgres(ctx, p.tx, rows)
}
