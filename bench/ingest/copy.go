package main

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/expd/expd/assignments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/vocab"
)

// copyResult times the baseline: the rows COPYed into events alone, and
// the same rows written to every table the API writes.
type copyResult struct {
	eventsOnly, allTables loadResult
}

// copyAll is the baseline, with one pgx connection and the same rows as
// the API's (under the second org and its experiment, so keys and pins do
// not collide), twice:
//
//   - events only: one COPY into events (what docs/ingest.md measured
//     before event_ids existed);
//   - all tables, in one transaction: COPY into events, COPY of the ids
//     into event_ids, COPY of each (experiment, user)'s first exposure
//     into assignments, and the month's usage row: every row the API
//     writes, with none of its checks (no dedup, no conflict handling,
//     no HTTP, JSON or validation).
//
// The second copy goes to a fresh copy org, so both write new keys.
func copyAll(ctx context.Context, env *benchEnv, batches []batch) (copyResult, error) {
	var out copyResult
	conn, err := pgx.Connect(ctx, env.dsn)
	if err != nil {
		return out, err
	}
	defer conn.Close(ctx)
	for i, allTables := range []bool{false, true} {
		if i > 0 {
			if env.copyOrg, env.copyExpID, err = newOrg(ctx, env.db); err != nil {
				return out, err
			}
		}
		rows, err := rowsOf(env, batches)
		if err != nil {
			return out, err
		}
		res, err := copyRows(ctx, conn, rows, allTables)
		if err != nil {
			return out, err
		}
		if allTables {
			out.allTables = res
		} else {
			out.eventsOnly = res
		}
	}
	return out, nil
}

func copyRows(ctx context.Context, conn *pgx.Conn, rows []ingest.EventRow, allTables bool) (loadResult, error) {
	org, exp := uuid.MustParse(rows[0].OrgID), uuid.MustParse(rows[0].ExperimentID)
	now := time.Now().UTC()
	for i := range rows {
		rows[i].ReceivedAt = now
	}
	start := time.Now()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return loadResult{}, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	n, err := ingest.CopyEvents(ctx, tx, rows)
	if err != nil {
		return loadResult{}, err
	}
	if allTables {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"event_ids"}, []string{"org_id", "event_id", "ts"},
			pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) { return []any{org, rows[i].EventID, rows[i].Ts}, nil })); err != nil {
			return loadResult{}, fmt.Errorf("copy event_ids: %w", err)
		}
		pins := firstExposures(rows)
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"assignments"}, []string{"org_id", "experiment_id", "user_id", "variant", "source", "created_at"},
			pgx.CopyFromSlice(len(pins), func(i int) ([]any, error) {
				return []any{org, exp, pins[i].UserID, pins[i].Variant, assignments.SourceExposure, now}, nil
			})); err != nil {
			return loadResult{}, fmt.Errorf("copy assignments: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO event_usage (org_id, month, events) VALUES ($1, $2, $3)`, org, ingest.MonthOf(now), n); err != nil {
			return loadResult{}, fmt.Errorf("usage: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return loadResult{}, err
	}
	return loadResult{rows: int(n), elapsed: time.Since(start)}, nil
}

// firstExposures is each user's earliest exposure (the rows have one
// experiment): the pins the API writes.
func firstExposures(rows []ingest.EventRow) []*ingest.EventRow {
	at := make(map[string]int) // user -> index in out
	var out []*ingest.EventRow
	for i := range rows {
		r := &rows[i]
		if r.Type != vocab.TypeExposure {
			continue
		}
		if j, ok := at[r.UserID]; !ok {
			at[r.UserID] = len(out)
			out = append(out, r)
		} else if r.Ts.Before(out[j].Ts) {
			out[j] = r
		}
	}
	return out
}

// rowsOf converts the batches' events as the API does, for the copy org.
func rowsOf(env *benchEnv, batches []batch) ([]ingest.EventRow, error) {
	p := ingest.Preparer{
		OrgID:  env.copyOrg,
		Window: ingest.Window{Now: time.Now(), MaxAge: ingest.LiveMaxAge},
		Source: ingest.SourceAPI,
		Lookup: func([]string) (ingest.Refs, error) { return ingest.Refs{env.experimentID: env.copyExpID}, nil },
	}
	var rows []ingest.EventRow
	for _, b := range batches {
		raws := make([][]byte, len(b.events))
		for i := range b.events {
			raws[i], _ = jsonOf(b.events[i])
		}
		prep, err := p.Prepare(raws)
		if err != nil {
			return nil, err
		}
		rows = append(rows, prep.Rows...)
	}
	return rows, nil
}
