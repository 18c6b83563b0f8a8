// Command scale measures expd's PostgreSQL storage at growing size
// (docs/scale.md): one enterprise org, -experiments experiments over
// -days UTC days. Each pass adds -per-pass events spread over those days
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
//	DATABASE_URL=postgres://... go run ./bench/scale -passes 2
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"time"
)

type config struct {
	experiments, days, passes int
	perPass, ingest           int
	keep                      bool
}

func main() {
	var cfg config
	flag.IntVar(&cfg.experiments, "experiments", 200, "experiments of the org")
	flag.IntVar(&cfg.days, "days", 30, "days of events before today")
	flag.IntVar(&cfg.passes, "passes", 2, "passes; each adds -per-pass events and measures")
	flag.IntVar(&cfg.perPass, "per-pass", 10_000_000, "events added by each pass")
	flag.IntVar(&cfg.ingest, "ingest", 200_000, "events written through ingest.Writer at each measurement")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the schema")
	flag.Parse()
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
	fmt.Println("| events | bulk load rows/s | ingest events/s | events table | events indexes | event_ids (table+index) | nightly, whole org | nightly, largest experiment | drop one day (rows) |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for pass := 1; pass <= cfg.passes; pass++ {
		loaded, took, err := env.fill(ctx, pass)
		if err != nil {
			log.Fatal(err)
		}
		m, err := env.measure(ctx, pass)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("| %d | %.0f | %.0f | %s | %s | %s | %s (%d runs) | %s (%d users) | %s (%d) |\n",
			m.events, float64(loaded)/took.Seconds(), m.ingestRate, mib(m.eventsTable), mib(m.eventsIndexes), mib(m.idsTotal),
			m.nightlyOrg.Round(time.Millisecond), m.nightlyRuns, m.nightlyLargest.Round(time.Millisecond), m.largestUsers,
			m.dropDay.Round(time.Millisecond), m.dropRows)
	}
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
