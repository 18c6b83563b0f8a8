package ingest

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"

	"github.com/expd/expd/assignments"
	"github.com/expd/expd/models"
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

type pgTx struct {
	tx     pgx.Tx
	staged bool // the staging table exists and may hold rows of this tx
}

// eventColumns are the events columns in COPY order.
var eventColumns = []string{
	"org_id", "event_id", "type", "experiment_id", "user_id", "variant", "ts", "received_at", "config_version",
	"model", "latency_ms", "input_tokens", "output_tokens", "total_tokens", "cost_usd", "time_to_first_token_ms",
	"error", "business_metric", "value", "prompt", "response", "source",
}

var (
	columnList = strings.Join(eventColumns, ", ")
	// The staging table is a temporary table per connection, emptied at
	// every commit; temporary tables write no WAL.
	createStaging = `CREATE TEMP TABLE IF NOT EXISTS ingest_staging (LIKE events) ON COMMIT DELETE ROWS`
	insertStaged  = `INSERT INTO events (` + columnList + `) SELECT ` + columnList +
		` FROM ingest_staging ON CONFLICT (org_id, event_id) DO NOTHING RETURNING org_id::text, event_id`
	// The earliest exposure of each (experiment, user) in the group pins
	// it, unless a pin exists already (docs/architecture.md §5).
	pinStaged = `INSERT INTO assignments (org_id, experiment_id, user_id, variant, source, created_at)
SELECT DISTINCT ON (experiment_id, user_id) org_id, experiment_id, user_id, variant, '` + assignments.SourceExposure + `', $1
FROM ingest_staging WHERE type = 'exposure' ORDER BY experiment_id, user_id, ts
ON CONFLICT (experiment_id, user_id) DO NOTHING`
)

func (p *pgTx) lockUsage(ctx context.Context, month string, orgs []string) (map[string]int64, error) {
	rows, err := p.tx.Query(ctx, `INSERT INTO event_usage (org_id, month, events)
SELECT o::uuid, $2, 0 FROM unnest($1::text[]) AS o
ON CONFLICT (org_id, month) DO UPDATE SET events = event_usage.events
RETURNING org_id::text, events`, orgs, month)
	if err != nil {
		return nil, fmt.Errorf("lock usage: %w", err)
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
	rows, err := p.tx.Query(ctx, `SELECT event_id FROM events WHERE org_id = $1 AND event_id = ANY($2::text[])`, orgID, eventIDs)
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

func (p *pgTx) insert(ctx context.Context, rows []models.Event) ([]eventKey, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	if err := p.stage(ctx, rows); err != nil {
		return nil, err
	}
	res, err := p.tx.Query(ctx, insertStaged)
	if err != nil {
		return nil, fmt.Errorf("insert staged events: %w", err)
	}
	inserted := make([]eventKey, 0, len(rows))
	var k eventKey
	if _, err := pgx.ForEachRow(res, []any{&k.orgID, &k.eventID}, func() error {
		inserted = append(inserted, k)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("insert staged events: %w", err)
	}
	if _, err := p.tx.Exec(ctx, pinStaged, rows[0].ReceivedAt); err != nil {
		return nil, fmt.Errorf("pin exposures: %w", err)
	}
	return inserted, nil
}

// stage COPYs rows into the (emptied) staging table.
func (p *pgTx) stage(ctx context.Context, rows []models.Event) error {
	prep := createStaging
	if p.staged {
		prep = `TRUNCATE ingest_staging`
	}
	if _, err := p.tx.Exec(ctx, prep); err != nil {
		return fmt.Errorf("prepare staging table: %w", err)
	}
	p.staged = true
	src, err := copySource(rows)
	if err != nil {
		return err
	}
	if _, err := p.tx.CopyFrom(ctx, pgx.Identifier{"ingest_staging"}, eventColumns, src); err != nil {
		return fmt.Errorf("copy events: %w", err)
	}
	return nil
}

// copySource feeds rows to COPY. Uuids are parsed here into [16]byte,
// which pgx encodes directly (a uuid.UUID would go through its
// driver.Valuer, several times slower).
func copySource(rows []models.Event) (pgx.CopyFromSource, error) {
	ids := make(map[string][16]byte)
	parse := func(s string) ([16]byte, error) {
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
	for i := range rows {
		if _, err := parse(rows[i].OrgID); err != nil {
			return nil, err
		}
		if _, err := parse(rows[i].ExperimentID); err != nil {
			return nil, err
		}
	}
	return pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
		r := &rows[i]
		return []any{
			ids[r.OrgID], r.EventID, r.Type, ids[r.ExperimentID], r.UserID, r.Variant, r.Ts, r.ReceivedAt, r.ConfigVersion,
			r.Model, r.LatencyMs, r.InputTokens, r.OutputTokens, r.TotalTokens, r.CostUSD, r.TimeToFirstTokenMs,
			r.Error, r.BusinessMetric, r.Value, r.Prompt, r.Response, r.Source,
		}, nil
	}), nil
}

func (p *pgTx) addUsage(ctx context.Context, month string, added map[string]int64) error {
	if len(added) == 0 {
		return nil
	}
	orgs := make([]string, 0, len(added))
	for org := range added {
		orgs = append(orgs, org)
	}
	slices.Sort(orgs)
	counts := make([]int64, len(orgs))
	for i, org := range orgs {
		counts[i] = added[org]
	}
	_, err := p.tx.Exec(ctx, `INSERT INTO event_usage (org_id, month, events)
SELECT o::uuid, $2, n FROM unnest($1::text[], $3::bigint[]) AS t(o, n)
ON CONFLICT (org_id, month) DO UPDATE SET events = event_usage.events + excluded.events`, orgs, month, counts)
	if err != nil {
		return fmt.Errorf("add usage: %w", err)
	}
	return nil
}
