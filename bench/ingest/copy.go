package main

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/models"
)

var copyColumns = []string{
	"org_id", "event_id", "type", "experiment_id", "user_id", "variant", "ts", "received_at", "config_version",
	"model", "latency_ms", "input_tokens", "output_tokens", "total_tokens", "cost_usd", "time_to_first_token_ms",
	"error", "business_metric", "value", "prompt", "response", "source",
}

// copyAll COPYs the same events (under the second org, so the keys do not
// collide) into the events table with one pgx connection: the baseline.
func copyAll(ctx context.Context, env *benchEnv, batches []batch) (loadResult, error) {
	rows, err := rowsOf(env, batches)
	if err != nil {
		return loadResult{}, err
	}
	conn, err := pgx.Connect(ctx, env.dsn)
	if err != nil {
		return loadResult{}, err
	}
	defer conn.Close(ctx)
	org, exp := uuid.MustParse(env.copyOrg), uuid.MustParse(env.experimentID)
	now := time.Now().UTC()
	start := time.Now()
	n, err := conn.CopyFrom(ctx, pgx.Identifier{"events"}, copyColumns, pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
		r := &rows[i]
		return []any{org, r.EventID, r.Type, exp, r.UserID, r.Variant, r.Ts, now, r.ConfigVersion,
			r.Model, r.LatencyMs, r.InputTokens, r.OutputTokens, r.TotalTokens, r.CostUSD, r.TimeToFirstTokenMs,
			r.Error, r.BusinessMetric, r.Value, r.Prompt, r.Response, r.Source}, nil
	}))
	return loadResult{rows: int(n), elapsed: time.Since(start)}, err
}

// rowsOf converts the batches' events as the API does.
func rowsOf(env *benchEnv, batches []batch) ([]models.Event, error) {
	p := ingest.Preparer{
		OrgID:  env.copyOrg,
		Window: ingest.Window{Now: time.Now(), MaxAge: ingest.LiveMaxAge},
		Source: ingest.SourceAPI,
		Lookup: func([]string) (ingest.Refs, error) { return ingest.Refs{env.experimentID: env.experimentID}, nil },
	}
	var rows []models.Event
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
