package main

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/erasure"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/secrets"
	"github.com/expd/expd/vocab"
)

// erasureTiming is one user's erasure at the current size: each step of
// the Erasure workflow (activities.EraseTable per table, then
// CompleteErasure) run in order on the real activities, timed alone,
// with the rows it removed.
type erasureTiming struct {
	events int64
	total  time.Duration
	steps  []string // "table: rows in duration"
}

// erase erases one heavy user (plantUser) the way the workflow does,
// without Temporal in the timing.
func (e *env) erase(ctx context.Context, pass int) (erasureTiming, error) {
	m := erasureTiming{events: e.events}
	key, err := secrets.NewKey()
	if err != nil {
		return m, err
	}
	ring, err := secrets.Parse(key, "")
	if err != nil {
		return m, err
	}
	acts := &activities.Activities{DB: e.db, Secrets: ring}
	var events ingest.EventStore = ingest.SQLEvents{DB: e.db}
	if e.ch != nil {
		acts.Events, events = e.ch.store, e.ch.store
	}
	user, err := e.plantUser(ctx, pass, events)
	if err != nil {
		return m, err
	}
	m.events += heavyDays * heavyPerDay * int64(min(heavyExperiments, len(e.expIDs)))
	if e.ch != nil {
		m.events = e.ch.events + heavyDays*heavyPerDay*int64(min(heavyExperiments, len(e.expIDs)))
	}
	v, _, err := erasure.Create(ctx, e.db, ring, e.orgID, user, "bench", time.Now())
	if err != nil {
		return m, err
	}
	start := time.Now()
	for _, table := range erasure.Tables {
		t0 := time.Now()
		res, err := acts.EraseTable(ctx, activities.EraseTableInput{ErasureID: v.ID, Table: table})
		if err != nil {
			return m, err
		}
		m.steps = append(m.steps, fmt.Sprintf("%s %d in %s", table, res.Removed, time.Since(t0).Round(time.Millisecond)))
	}
	if _, err := acts.CompleteErasure(ctx, activities.CompleteErasureInput{ErasureID: v.ID}); err != nil {
		return m, err
	}
	m.total = time.Since(start)
	return m, nil
}

func (m erasureTiming) row() string {
	return fmt.Sprintf("| %d | %s | %s |", m.events, m.total.Round(time.Millisecond), strings.Join(m.steps, "; "))
}

// Shape of the user plantUser adds: heavyDays days of heavyExperiments
// experiments, heavyPerDay events a day in each (one exposure, the rest
// model calls, each scored), a pin per experiment, and heavyExprs
// rollup rows per experiment and day.
const (
	heavyDays        = 6
	heavyExperiments = 4
	heavyPerDay      = 50
	heavyExprs       = 3
)

// plantUser adds one user who used the app a lot (1,200 events over 6
// days in 4 experiments, 1,176 scores, 4 pins, 72 rollup rows), next to
// the fill's users, and returns their id: an erasure must find and remove
// all of it among the fill's millions of rows. The events and scores go
// to events (PostgreSQL, or ClickHouse with -clickhouse), the pins and
// rollups to PostgreSQL.
func (e *env) plantUser(ctx context.Context, pass int, events ingest.EventStore) (string, error) {
	user := fmt.Sprintf("heavy-p%d", pass)
	exps := e.expIDs[:min(heavyExperiments, len(e.expIDs))]
	var rows []ingest.EventRow
	var grades []scores.Row
	prompt, response, model, latency := "my email is heavy@example.com", "noted", "gpt-4o-mini", 250.0
	for d := 1; d <= heavyDays; d++ {
		for x, exp := range exps {
			for k := range heavyPerDay {
				ts := e.today.AddDate(0, 0, -d).Add(12*time.Hour + time.Duration(k)*time.Minute)
				r := ingest.EventRow{OrgID: e.orgID, EventID: fmt.Sprintf("%s-%d-%d-%d", user, d, x, k), Type: vocab.TypeExposure,
					ExperimentID: exp, UserID: user, Variant: "control", Ts: ts, ReceivedAt: ts, Source: ingest.SourceAPI}
				if k > 0 {
					r.Type = vocab.TypeModelCall
					r.Model, r.LatencyMs, r.Prompt, r.Response = &model, &latency, &prompt, &response
					grades = append(grades, scores.Row{OrgID: e.orgID, CallID: r.EventID, Name: "helpfulness", Source: scores.SourceJudge, Value: 0.8, Ts: ts})
				}
				rows = append(rows, r)
			}
		}
	}
	if _, err := events.Insert(ctx, rows); err != nil {
		return "", fmt.Errorf("plant the heavy user's events: %w", err)
	}
	if _, err := events.UpsertScores(ctx, grades, time.Now()); err != nil {
		return "", fmt.Errorf("plant the heavy user's scores: %w", err)
	}
	pg := "{" + strings.Join(exps, ",") + "}"
	for _, st := range []struct {
		what, sql string
		args      []any
	}{
		{"pins", `INSERT INTO assignments (org_id, experiment_id, user_id, variant, source, created_at)
SELECT ?::uuid, x, ?, 'control', 'exposure', now() FROM unnest(?::uuid[]) x`, []any{e.orgID, user, pg}},
		{"rollups", `INSERT INTO result_rollups (experiment_id, day, user_id, expr, org_id, first_ts, variant, s_all, n_all, s_after, n_after)
SELECT x, to_char(?::date - d, 'YYYY-MM-DD'), ?, 'expr-' || r, ?::uuid, now(), 'control', 1, 1, 1, 1
FROM unnest(?::uuid[]) x, generate_series(1, ?) d, generate_series(1, ?) r`, []any{e.today, user, e.orgID, pg, heavyDays, heavyExprs}},
		{"rolled-up days", `INSERT INTO result_rollup_days (experiment_id, day, org_id, exposures_from, exprs, mark, rolled_at)
SELECT x, to_char(?::date - d, 'YYYY-MM-DD'), ?::uuid, now(), '', 0, now()
FROM unnest(?::uuid[]) x, generate_series(1, ?) d ON CONFLICT DO NOTHING`, []any{e.today, e.orgID, pg, heavyDays}},
	} {
		if err := e.db.WithContext(ctx).Exec(st.sql, st.args...).Error; err != nil {
			return "", fmt.Errorf("plant the heavy user's %s: %w", st.what, err)
		}
	}
	log.Printf("pass %d: heavy user %s: %d events, %d scores, %d pins, %d rollup rows", pass, user, len(rows), len(grades), len(exps), len(exps)*heavyDays*heavyExprs)
	return user, nil
}
