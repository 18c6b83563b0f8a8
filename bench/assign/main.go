// Command assign measures the SDK hot paths over loopback against a bare
// gin handler in the same run: throughput of POST /v1/assign and of
// GET /v1/config answered 304, each as a ratio to a gin route that returns
// a constant JSON body, and latency percentiles at half of each one's
// maximum rate. The servers and the load run in this one process.
//
//	go run ./bench/assign [-duration 3s] [-concurrency 32] [-users 10000]
//
// DATABASE_URL selects PostgreSQL (a fresh schema, dropped at exit);
// otherwise a SQLite file in a temporary directory.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"time"
)

func main() {
	duration := flag.Duration("duration", 3*time.Second, "length of each measurement")
	concurrency := flag.Int("concurrency", 32, "concurrent connections of the load")
	users := flag.Int("users", 10_000, "distinct user ids of the assign load (all pinned and cached in a warm-up)")
	flag.Parse()

	tgt, cleanup, err := startTargets(os.Getenv("DATABASE_URL"), *users)
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()
	scenarios := []scenario{tgt.bare(), tgt.config304(), tgt.assign()}
	load := loader{concurrency: *concurrency}

	// Warm up: connections, caches, and a pin for every user.
	for _, s := range scenarios {
		load.closed(s, time.Second)
	}
	load.closed(tgt.assignEachUserOnce(), 0)

	// Interleaved rounds, so that drift of the shared machine hits all alike.
	max := map[string]float64{}
	for round := 0; round < 2; round++ {
		for _, s := range scenarios {
			r := load.closed(s, *duration)
			max[s.name] += r.rate() / 2
		}
	}
	fmt.Printf("%-12s %12s %8s %10s %10s %10s\n", "route", "max req/s", "ratio", "p50@half", "p99@half", "errors")
	base := max[scenarios[0].name]
	for _, s := range scenarios {
		half := load.open(s, max[s.name]/2, *duration)
		fmt.Printf("%-12s %12.0f %8.2f %10s %10s %10d\n", s.name, max[s.name], max[s.name]/base,
			half.percentile(0.50).Round(time.Microsecond), half.percentile(0.99).Round(time.Microsecond), half.errors)
	}
}
