// Command ingest is the load program of the event write path (POST /v1/events and import).
// It posts batches of events from many concurrent clients over loopback to
// POST /v1/events (of a running `expd api` with -target, else of the
// router served in-process on a loopback port), then COPYs the same rows
// with a single pgx client, into events alone and into every table the
// API writes (copy.go), and reports events/s of each, the ratios and
// per-request latency; then it imports an NDJSON
// file through POST /v1/events/import and reports rows/s. -score-rounds
// and -trace-rounds compare POST /v1/scores and POST /v1/traces (OTLP) with
// POST /v1/events carrying the same model calls. -clickhouse adds, in each
// round, POST /v1/events with the events on ClickHouse (a fresh database
// there; CLICKHOUSE_CLUSTER for a cluster) and a raw clickhouse-go batch
// insert of the same rows into the same tables, and the clients' batches
// inserted raw (clickhouse.go), with each path's CPU per event in every
// process it runs in (cpu.go); -redact-rounds
// compares model calls stored under the redact payload policy with store.
// -spool puts the ingest spool in front of ClickHouse: the API phase is
// timed until every acknowledged event is shipped, its acknowledgements
// apart.
//
//	DATABASE_URL=postgres://... go run ./bench/ingest -clients 64 -requests 4000
//
// Without -target it migrates a fresh schema and drops it at the end.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime/pprof"
	"time"

	"github.com/expd/expd/ingest"
)

func main() {
	cfg := config{}
	flag.StringVar(&cfg.databaseURL, "db", os.Getenv("DATABASE_URL"), "PostgreSQL URL (default $DATABASE_URL)")
	flag.StringVar(&cfg.target, "target", "", "base URL of a running expd api on the same database (default: serve the router in-process)")
	flag.IntVar(&cfg.clients, "clients", 64, "concurrent HTTP clients")
	flag.IntVar(&cfg.requests, "requests", 3000, "POST /v1/events requests per round")
	flag.IntVar(&cfg.rounds, "rounds", 1, "rounds, each of -requests requests then the copies of their rows")
	flag.IntVar(&cfg.batch, "batch", 100, "events per request")
	flag.IntVar(&cfg.importLines, "import-lines", 200_000, "lines of the NDJSON import (0: skip)")
	flag.IntVar(&cfg.scoreRounds, "score-rounds", 0, "rounds comparing POST /v1/scores with POST /v1/events carrying as many model calls (0: skip; scores.go)")
	flag.IntVar(&cfg.redactRounds, "redact-rounds", 0, "rounds comparing POST /v1/events of model calls under the redact payload policy with store (0: skip; redact.go)")
	flag.IntVar(&cfg.traceRounds, "trace-rounds", 0, "rounds comparing POST /v1/traces (OTLP GenAI spans) with POST /v1/events carrying the same model calls (0: skip; traces.go)")
	flag.IntVar(&cfg.groups, "groups", 0, "group transactions in flight at once (ingest.Options.Concurrency; 0: the default)")
	flag.DurationVar(&cfg.linger, "linger", 0, "how long a group on ClickHouse waits for more requests (ingest.Options.Linger; 0: the engine writer's default)")
	flag.StringVar(&cfg.clickhouseURL, "clickhouse", os.Getenv("CLICKHOUSE_URL"), "ClickHouse DSN: also measure the write path with the events there, against a raw batch insert (default $CLICKHOUSE_URL)")
	flag.StringVar(&cfg.clickhouseCluster, "clickhouse-cluster", os.Getenv("CLICKHOUSE_CLUSTER"), "the ClickHouse cluster to shard over (default $CLICKHOUSE_CLUSTER)")
	flag.StringVar(&cfg.spool, "spool", "", "with -clickhouse: the API's writer acknowledges into an ingest spool in this directory (INGEST_SPOOL_DIR) and the API phase lasts until every acknowledged event is shipped")
	flag.StringVar(&cfg.clickhousePids, "clickhouse-pids", "", "the ClickHouse servers' pids, comma-separated, for their CPU per event (default: the pid files under $CLICKHOUSE_CLUSTER_DIR)")
	flag.DurationVar(&cfg.cpuSettle, "cpu-settle", 10*time.Second, "how long after a ClickHouse phase its CPU is still counted (the merges it caused)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the rounds here")
	flag.Parse()
	if cfg.databaseURL == "" {
		log.Fatal("set DATABASE_URL or -db to a postgres:// URL")
	}
	ctx := context.Background()
	env, err := setUp(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer env.tearDown()
	var chb *chBench
	if cfg.clickhouseURL != "" {
		if cfg.target != "" {
			log.Fatal("-clickhouse serves its own router: leave -target unset")
		}
		var stop func()
		if chb, stop, err = setUpClickHouse(ctx, env, cfg, ingest.Options{Concurrency: cfg.groups, Linger: cfg.linger}); err != nil {
			log.Fatal(err)
		}
		defer stop()
	}
	var chSum chRound

	// Rounds alternate the API and the copies, so that on a shared
	// machine both see the same load; the ratio is of the rounds' sums.
	var api, eventsOnly, allTables loadResult
	stopProfile, err := startProfile(*profile)
	if err != nil {
		log.Fatal(err)
	}
	for round := range cfg.rounds {
		batches := makeBatches(env.experimentID, round*cfg.requests*cfg.batch, cfg.requests, cfg.batch)
		a, err := postAll(ctx, env, "/v1/events", batches, cfg.clients)
		if err != nil {
			log.Fatal(err)
		}
		raw, err := copyAll(ctx, env, batches)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("round %d: API %.0f events/s (p50 %s, p99 %s); COPY events only %.0f rows/s; COPY all tables %.0f rows/s; ratio %.2f\n",
			round+1, a.rate(), a.quantile(0.5), a.quantile(0.99), raw.eventsOnly.rate(), raw.allTables.rate(), a.rate()/raw.allTables.rate())
		api.add(a)
		eventsOnly.add(raw.eventsOnly)
		allTables.add(raw.allTables)
		if chb != nil {
			r, err := chb.round(ctx, round*cfg.requests*cfg.batch, cfg.requests, cfg.batch, cfg.clients)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Printf("round %d: API on ClickHouse %.0f events/s (p50 %s, p99 %s); raw clickhouse-go batch insert %.0f events/s; ratio %.2f; against the API on PostgreSQL %.2f; the clients' batches inserted raw %.0f events/s\n",
				round+1, r.api.rate(), r.api.quantile(0.5), r.api.quantile(0.99), r.raw.rate(), r.api.rate()/r.raw.rate(), r.api.rate()/a.rate(), r.clients.rate())
			chSum.add(r)
		}
	}
	stopProfile()
	if cfg.traceRounds > 0 {
		if err := compareTraces(ctx, env, cfg); err != nil {
			log.Fatal(err)
		}
	}
	if cfg.scoreRounds > 0 {
		if err := compareScores(ctx, env, cfg); err != nil {
			log.Fatal(err)
		}
	}
	if cfg.redactRounds > 0 {
		if err := compareRedaction(ctx, env, cfg); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("POST /v1/events: %d events in %d rounds of %d requests of %d from %d clients in %s: %.0f events/s; latency p50 %s p99 %s max %s\n",
		api.events, cfg.rounds, cfg.requests, cfg.batch, cfg.clients, api.elapsed.Round(time.Millisecond), api.rate(),
		api.quantile(0.5), api.quantile(0.99), api.quantile(1))
	fmt.Printf("raw COPY into events only (1 pgx client, same rows): %d rows in %s: %.0f rows/s; ratio API / this: %.2f\n",
		eventsOnly.rows, eventsOnly.elapsed.Round(time.Millisecond), eventsOnly.rate(), api.rate()/eventsOnly.rate())
	fmt.Printf("raw COPY into every table the API writes (events, event_ids, assignments pins, usage; 1 transaction): %d rows in %s: %.0f rows/s\n",
		allTables.rows, allTables.elapsed.Round(time.Millisecond), allTables.rate())
	fmt.Printf("ratio API / raw COPY (same rows, same tables): %.2f\n", api.rate()/allTables.rate())
	if chb != nil {
		chb.report(chSum, api, cfg.clients)
	}
	if cfg.importLines > 0 {
		imp, err := importAll(ctx, env, cfg.importLines)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("POST /v1/events/import: %d lines (%d MiB) in %s: %.0f rows/s\n",
			imp.rows, imp.bytes>>20, imp.elapsed.Round(time.Millisecond), imp.rate())
	}
}

// startProfile starts a CPU profile into path (none when empty).
func startProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

type config struct {
	databaseURL, target                                    string
	clickhouseURL, clickhouseCluster                       string
	clients, requests, batch, importLines                  int
	groups, rounds, scoreRounds, traceRounds, redactRounds int
	clickhousePids, spool                                  string
	linger, cpuSettle                                      time.Duration
}
