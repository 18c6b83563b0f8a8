// Command ingest is the load program of the event write path (POST /v1/events and import).
// It posts batches of events from many concurrent clients over loopback to
// POST /v1/events (of a running `expd api` with -target, else of the
// router served in-process on a loopback port), then COPYs the same rows
// into the same table with a single pgx client, and reports events/s of
// each, their ratio and per-request latency; then it imports an NDJSON
// file through POST /v1/events/import and reports rows/s.
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
)

func main() {
	cfg := config{}
	flag.StringVar(&cfg.databaseURL, "db", os.Getenv("DATABASE_URL"), "PostgreSQL URL (default $DATABASE_URL)")
	flag.StringVar(&cfg.target, "target", "", "base URL of a running expd api on the same database (default: serve the router in-process)")
	flag.IntVar(&cfg.clients, "clients", 64, "concurrent HTTP clients")
	flag.IntVar(&cfg.requests, "requests", 3000, "POST /v1/events requests in all")
	flag.IntVar(&cfg.batch, "batch", 100, "events per request")
	flag.IntVar(&cfg.importLines, "import-lines", 200_000, "lines of the NDJSON import (0: skip)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the POST /v1/events phase here")
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

	batches := makeBatches(env.experimentID, cfg.requests, cfg.batch)
	stopProfile, err := startProfile(*profile)
	if err != nil {
		log.Fatal(err)
	}
	api, err := postAll(ctx, env, batches, cfg.clients)
	stopProfile()
	if err != nil {
		log.Fatal(err)
	}
	raw, err := copyAll(ctx, env, batches)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("POST /v1/events: %d events in %d requests of %d from %d clients in %s: %.0f events/s; latency p50 %s p99 %s max %s\n",
		api.events, cfg.requests, cfg.batch, cfg.clients, api.elapsed.Round(time.Millisecond), api.rate(),
		api.quantile(0.5), api.quantile(0.99), api.quantile(1))
	fmt.Printf("raw COPY (1 pgx client, same rows, same table): %d rows in %s: %.0f rows/s\n",
		raw.rows, raw.elapsed.Round(time.Millisecond), raw.rate())
	fmt.Printf("ratio API / raw COPY: %.2f\n", api.rate()/raw.rate())
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
	databaseURL, target                   string
	clients, requests, batch, importLines int
}
