package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"time"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/bench/benchseed"
	"github.com/expd/expd/clickhouse"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/keys"
)

// chBench is the ClickHouse side (-clickhouse): a second router whose
// writer puts the events on ClickHouse (the control plane in the same
// database as the PostgreSQL side), and one clickhouse-go connection for
// the baseline, a raw batch insert of the same rows into the same tables.
type chBench struct {
	store *clickhouse.Store
	api   *benchEnv // env with the ClickHouse router and its org
	raw   *benchseed.RawClickHouse
}

// setUpClickHouse migrates a fresh database on the ClickHouse of dsn
// (dropped by the returned teardown) and serves the second router.
func setUpClickHouse(ctx context.Context, env *benchEnv, dsn, cluster string, opts ingest.Options) (*chBench, func(), error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, nil, err
	}
	b := make([]byte, 6)
	rand.Read(b)
	database := "bench_" + hex.EncodeToString(b)
	u.Path = "/" + database
	store, err := clickhouse.Open(ctx, u.String(), cluster)
	if err != nil {
		return nil, nil, err
	}
	teardown := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = store.DropDatabase(ctx)
		store.Close()
	}
	if err := store.Migrate(ctx); err != nil {
		teardown()
		return nil, nil, err
	}
	c := &chBench{store: store}
	if c.raw, err = benchseed.OpenRawClickHouse(dsn, database, cluster); err != nil {
		teardown()
		return nil, nil, err
	}
	api := *env
	if api.apiOrg, api.experimentID, err = newOrg(ctx, env.db); err != nil {
		teardown()
		return nil, nil, err
	}
	if api.publishable, err = keys.Issue(ctx, env.db, api.apiOrg, auth.Publishable, "bench"); err != nil {
		teardown()
		return nil, nil, err
	}
	if api.baseURL, err = env.serve(ingest.NewEngineWriter(env.db, store, opts)); err != nil {
		teardown()
		return nil, nil, err
	}
	c.api = &api
	return c, func() { c.raw.Close(); teardown() }, nil
}

// round posts batches of the ClickHouse org's experiment through the API,
// then inserts the same rows (under a fresh org) with one raw batch into
// events, whose claims the schema derives into event_ids.
func (c *chBench) round(ctx context.Context, first, requests, size, clients int) (api, raw loadResult, err error) {
	batches := makeBatches(c.api.experimentID, first, requests, size)
	if api, err = postAll(ctx, c.api, "/v1/events", batches, clients); err != nil {
		return api, raw, err
	}
	rawEnv := *c.api
	if rawEnv.copyOrg, rawEnv.copyExpID, err = newOrg(ctx, c.api.db); err != nil {
		return api, raw, err
	}
	rows, err := rowsOf(&rawEnv, batches)
	if err != nil {
		return api, raw, err
	}
	raw, err = c.rawInsert(ctx, rows)
	return api, raw, err
}

// rawInsert is the baseline: the rows' events (their claims derived by
// the server), one batch through the Distributed table on one connection,
// none of the write path's checks (no claim probe, no control
// transaction, no HTTP, JSON or validation).
func (c *chBench) rawInsert(ctx context.Context, rows []ingest.EventRow) (loadResult, error) {
	now := time.Now().UTC()
	for i := range rows {
		rows[i].ReceivedAt = now
	}
	start := time.Now()
	if _, err := c.raw.Insert(ctx, rows); err != nil {
		return loadResult{}, err
	}
	return loadResult{events: len(rows), rows: 2 * len(rows), elapsed: time.Since(start)}, nil
}
