// Command scale measures expd's PostgreSQL storage at growing size
// (docs/scale.md): one enterprise org, -experiments experiments over
// -days UTC days. Each pass adds its -passes count of events spread over those days
// (the first experiment gets a tenth of the traffic, the rest share the
// remainder), and after each pass it measures:
//
//   - ingest rate: -ingest events through the real write path
//     (ingest.Writer: ids claimed in event_ids, COPY into the day's
//     partition, pins, usage), from 8 concurrent writers;
//   - table and index sizes of events (all partitions), event_ids and
//     assignments;
//   - the nightly run of yesterday for the whole org (the DailyResults
//     workflow on an in-process Temporal server) and, alone, for the
//     largest experiment (ExperimentResults);
//   - retention: dropping the oldest day partition (DropPartition).
//
// The bulk of each pass is generated inside PostgreSQL (INSERT ... SELECT
// into events and event_ids, day by day), so the machine time goes to
// measurements rather than to JSON encoding.
//
//	DATABASE_URL=postgres://... go run ./bench/scale -passes 10000000,20000000
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"
)

type config struct {
	experiments, days int
	sizes             []int // events added by each pass
	ingest            int
	keep              bool
	reuse             string // schema of an earlier run to continue on
	firstPass         int    // number of the first pass (event ids carry it)
}

func main() {
	var cfg config
	flag.IntVar(&cfg.experiments, "experiments", 200, "experiments of the org")
	flag.IntVar(&cfg.days, "days", 30, "days of events before today")
	passes := flag.String("passes", "10000000,10000000", "events added by each pass, comma-separated (0: measure only); each pass then measures")
	flag.IntVar(&cfg.ingest, "ingest", 200_000, "events written through ingest.Writer at each measurement")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the schema")
	flag.StringVar(&cfg.reuse, "reuse", "", "continue on this schema of an earlier run (kept)")
	flag.IntVar(&cfg.firstPass, "first-pass", 1, "number of the first pass; with -reuse, one more than the earlier run's last")
	flag.Parse()
	for _, f := range strings.Split(*passes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			log.Fatalf("-passes: %q is not a count", f)
		}
		cfg.sizes = append(cfg.sizes, n)
	}
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		log.Fatal("set DATABASE_URL to a PostgreSQL database")
	}
	ctx := context.Background()
	env, err := setUp(ctx, base, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer env.tearDown()
	fmt.Println("| events | bulk load rows/s | ingest events/s | events table | events indexes | event_ids (table+index) | nightly, whole org, cold | nightly, whole org, warm | manual run, largest experiment | drop one day (rows) |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for pass := cfg.firstPass; pass < cfg.firstPass+len(cfg.sizes); pass++ {
		loaded, took, err := env.fill(ctx, pass)
		if err != nil {
			log.Fatal(err)
		}
		m, err := env.measure(ctx, pass)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("| %d | %.0f | %.0f | %s | %s | %s | %s | %s (%d runs) | %s (%d users) | %s (%d) |\n",
			m.events, float64(loaded)/took.Seconds(), m.ingestRate, mib(m.eventsTable), mib(m.eventsIndexes), mib(m.idsTotal),
			m.nightlyCold.Round(time.Millisecond), m.nightlyOrg.Round(time.Millisecond), m.nightlyRuns, m.nightlyLargest.Round(time.Millisecond), m.largestUsers,
			m.dropDay.Round(time.Millisecond), m.dropRows)
	}
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
