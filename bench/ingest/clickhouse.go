package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/bench/benchseed"
	"github.com/expd/expd/clickhouse"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/keys"
)

// chBench is the ClickHouse side (-clickhouse): a second router whose
// writer puts the events on ClickHouse (the control plane in the same
// database as the PostgreSQL side), and clickhouse-go connections for the
// baselines: a raw batch insert of the same rows into the same tables on
// one connection (the issue's), and the clients' own batches inserted by
// as many connections.
type chBench struct {
	store   *clickhouse.Store
	api     *benchEnv // env with the ClickHouse router and its org
	raw     *benchseed.RawClickHouse
	clients *benchseed.RawClickHouse // a pool of one connection per client
	null    *benchEnv                // env whose base URL acks without looking (serveNull)
	meter   *cpuMeter
	spool   *ingest.SpooledEngine // -spool: the API's writes go through it
}

// chRound is one round's measurements: the API, the issue's baseline, the
// clients' own batches inserted raw, and the HTTP exchange alone.
type chRound struct {
	api, raw, clients, http loadResult
	acked                   time.Duration // -spool: the API's acknowledgements alone
}

func (r *chRound) add(o chRound) {
	r.acked += o.acked
	r.api.add(o.api)
	r.raw.add(o.raw)
	r.clients.add(o.clients)
	r.http.add(o.http)
}

// setUpClickHouse migrates a fresh database on the ClickHouse of dsn
// (dropped by the returned teardown) and serves the second router.
func setUpClickHouse(ctx context.Context, env *benchEnv, cfg config, opts ingest.Options) (*chBench, func(), error) {
	dsn, cluster := cfg.clickhouseURL, cfg.clickhouseCluster
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
	q := u.Query()
	q.Set("max_open_conns", strconv.Itoa(rawConns(cfg.clients)))
	q.Set("max_idle_conns", strconv.Itoa(rawConns(cfg.clients)))
	u.Path, u.RawQuery = "/default", q.Encode()
	if c.clients, err = benchseed.OpenRawClickHouse(u.String(), database, cluster); err != nil {
		c.raw.Close()
		teardown()
		return nil, nil, err
	}
	closeRaw := func() { c.raw.Close(); c.clients.Close(); teardown() }
	meter, closeMeter, err := newCPUMeter(ctx, env.db, c.raw, dsn, cluster, cfg.clickhousePids, os.Getenv("CLICKHOUSE_CLUSTER_DIR"), cfg.cpuSettle)
	if err != nil {
		closeRaw()
		return nil, nil, err
	}
	c.meter = meter
	closeRaw = func() { closeMeter(); c.raw.Close(); c.clients.Close(); teardown() }
	null := *env
	if null.baseURL, err = serveNull(cfg.batch); err != nil {
		closeRaw()
		return nil, nil, err
	}
	c.null = &null
	api := *env
	if api.apiOrg, api.experimentID, err = newOrg(ctx, env.db); err != nil {
		closeRaw()
		return nil, nil, err
	}
	if api.publishable, err = keys.Issue(ctx, env.db, api.apiOrg, auth.Publishable, "bench"); err != nil {
		closeRaw()
		return nil, nil, err
	}
	var writes ingest.Engine = store
	if cfg.spool != "" {
		if c.spool, err = ingest.OpenSpool(cfg.spool, store, ingest.SpoolOptions{}); err != nil {
			closeRaw()
			return nil, nil, err
		}
		writes, closeRaw = c.spool, func() {
			c.spool.Close(context.Background())
			closeMeter()
			c.raw.Close()
			c.clients.Close()
			teardown()
		}
	}
	if api.baseURL, err = env.serve(ingest.NewEngineWriter(env.db, writes, opts)); err != nil {
		closeRaw()
		return nil, nil, err
	}
	c.api = &api
	return c, closeRaw, nil
}

// round posts batches of the ClickHouse org's experiment through the API,
// then inserts the same rows (under a fresh org) with one raw batch into
// events, whose claims the schema derives into event_ids, then (under
// another fresh org) as the clients' batches from clients connections at
// once, each phase measured by the cpuMeter; last, posts the batches to
// the null handler, for the HTTP exchange's share of this process's CPU.
func (c *chBench) round(ctx context.Context, first, requests, size, clients int) (r chRound, err error) {
	batches := makeBatches(c.api.experimentID, first, requests, size)
	started := time.Now()
	if r.api, err = c.meter.measure(ctx, func() (loadResult, error) {
		res, err := postAll(ctx, c.api, "/v1/events", batches, clients)
		if err != nil || c.spool == nil {
			return res, err
		}
		// Spooled: the phase ends when every acknowledged event is
		// shipped (and so readable).
		r.acked, err = res.elapsed, c.spool.Flush(ctx)
		res.elapsed = time.Since(started)
		return res, err
	}); err != nil {
		return r, err
	}
	rows, err := c.freshRows(ctx, batches)
	if err != nil {
		return r, err
	}
	if r.raw, err = c.meter.measure(ctx, func() (loadResult, error) { return c.rawInsert(ctx, rows) }); err != nil {
		return r, err
	}
	if rows, err = c.freshRows(ctx, batches); err != nil {
		return r, err
	}
	if r.clients, err = c.meter.measure(ctx, func() (loadResult, error) { return c.clientInserts(ctx, rows, size, clients) }); err != nil {
		return r, err
	}
	r.http, err = postAll(ctx, c.null, "/v1/events", batches, clients)
	return r, err
}

// freshRows is the batches' rows under a fresh org, with their receipt
// time now.
func (c *chBench) freshRows(ctx context.Context, batches []batch) ([]ingest.EventRow, error) {
	env := *c.api
	var err error
	if env.copyOrg, env.copyExpID, err = newOrg(ctx, c.api.db); err != nil {
		return nil, err
	}
	rows, err := rowsOf(&env, batches)
	now := time.Now().UTC()
	for i := range rows {
		rows[i].ReceivedAt = now
	}
	return rows, err
}

// rawInsert is the issue's baseline: the rows' events (their claims
// derived by the server), one batch through the Distributed table on one
// connection, none of the write path's checks (no claim probe, no control
// transaction, no HTTP, JSON or validation).
func (c *chBench) rawInsert(ctx context.Context, rows []ingest.EventRow) (loadResult, error) {
	start := time.Now()
	if _, err := c.raw.Insert(ctx, rows); err != nil {
		return loadResult{}, err
	}
	return loadResult{events: len(rows), rows: 2 * len(rows), elapsed: time.Since(start)}, nil
}

// rawConns is how many connections insert the clients' batches raw: one
// per client, 32 at most, since a server takes 100 queries at once
// (max_concurrent_queries) and a synchronous insert through the
// Distributed table holds one on its node and one on each other shard.
func rawConns(clients int) int { return min(clients, 32) }

// clientInserts is the second baseline, for context: each of
// rawConns(clients) connections inserts the clients' batches of size rows
// as they come, as the raw insert does (through the Distributed table, no
// checks).
func (c *chBench) clientInserts(ctx context.Context, rows []ingest.EventRow, size, clients int) (loadResult, error) {
	start := time.Now()
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(rawConns(clients))
	for lo := 0; lo < len(rows); lo += size {
		part := rows[lo:min(lo+size, len(rows))]
		g.Go(func() error {
			_, err := c.clients.Insert(ctx, part)
			return err
		})
	}
	err := g.Wait()
	return loadResult{events: len(rows), rows: 2 * len(rows), elapsed: time.Since(start)}, err
}

// report prints the rounds' sums: the rates, then each path's CPU per
// event and what follows from it: ClickHouse's CPU per event raw / API
// (the share of the cluster's write capacity the API path delivers), and
// the best ratio this machine's cores allow the API path given its CPU
// per event outside ClickHouse's share of it.
func (c *chBench) report(r chRound, pg loadResult, clients int) {
	fmt.Printf("POST /v1/events on ClickHouse (%d shard(s)): %d events in %s: %.0f events/s; latency p50 %s p99 %s max %s\n",
		c.store.Shards(), r.api.events, r.api.elapsed.Round(time.Millisecond), r.api.rate(), r.api.quantile(0.5), r.api.quantile(0.99), r.api.quantile(1))
	if c.spool != nil {
		acked := float64(r.api.events) / r.acked.Seconds()
		fmt.Printf("  through the ingest spool: acknowledged at %.0f events/s (%s), shipped and readable at %.0f events/s (the rate above); acknowledged / raw batch insert: %.2f\n",
			acked, r.acked.Round(time.Millisecond), r.api.rate(), acked/r.raw.rate())
	}
	fmt.Printf("raw clickhouse-go batch insert of the same rows into events (claims derived into event_ids), one per round: %d events in %s: %.0f events/s\n",
		r.raw.events, r.raw.elapsed.Round(time.Millisecond), r.raw.rate())
	fmt.Printf("the clients' batches inserted raw, %d connections at once: %d events in %s: %.0f events/s\n",
		rawConns(clients), r.clients.events, r.clients.elapsed.Round(time.Millisecond), r.clients.rate())
	fmt.Printf("ratio API on ClickHouse / raw batch insert: %.2f; / the clients' batches raw: %.2f; API on ClickHouse / API on PostgreSQL: %.2f\n",
		r.api.rate()/r.raw.rate(), r.api.rate()/r.clients.rate(), r.api.rate()/pg.rate())
	fmt.Printf("CPU per event (each phase until %s after it, the idle rate taken off):\n", c.meter.settle)
	fmt.Printf("  API on ClickHouse: %s\n", r.api.cost.perEvent(r.api.events))
	fmt.Printf("    of this process's, the HTTP exchange alone (load generator and transport; a null handler): %.1f µs/event\n",
		perEventUs(r.http.cpu, r.http.events))
	fmt.Printf("  raw batch insert: %s\n", r.raw.cost.perEvent(r.raw.events))
	fmt.Printf("  the clients' batches raw: %s\n", r.clients.cost.perEvent(r.clients.events))
	chAPI, chRaw := perEventUs(r.api.cost.clickhouse, r.api.events), perEventUs(r.raw.cost.clickhouse, r.raw.events)
	fmt.Printf("ClickHouse CPU per event raw / API: %.2f (the clients' batches raw / API: %.2f)\n",
		chRaw/chAPI, perEventUs(r.clients.cost.clickhouse, r.clients.events)/chAPI)
	// On this machine every process shares its cores: at best the API
	// path runs them all at its CPU per event (less the generator's,
	// which a production API does not pay).
	cores := float64(runtime.NumCPU())
	apiAll := perEventUs(r.api.cost.total(), r.api.events)
	apiNoGen := apiAll - perEventUs(r.http.cpu, r.http.events)
	fmt.Printf("best API rate %d cores allow: %.0f events/s at %.1f µs/event (%.0f without the HTTP exchange's %.1f); ratio to the raw insert at most %.2f (%.2f)\n",
		int(cores), cores*1e6/apiAll, apiAll, cores*1e6/apiNoGen, apiAll-apiNoGen, cores*1e6/apiAll/r.raw.rate(), cores*1e6/apiNoGen/r.raw.rate())
}

func perEventUs(d time.Duration, events int) float64 {
	return float64(d.Microseconds()) / float64(max(events, 1))
}
