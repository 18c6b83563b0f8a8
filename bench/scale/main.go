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
// With -erasure it times one heavy user's erasure after each pass instead
// (the Erasure workflow's steps on the real activities, docs/privacy.md);
// with -clickhouse too, the events and scores are ClickHouse's.
//
//	DATABASE_URL=postgres://... go run ./bench/scale -passes 10000000,20000000
//	DATABASE_URL=postgres://... go run ./bench/scale -erasure -experiments 20 -passes 1000000,2000000,7000000
//	DATABASE_URL=postgres://... go run ./bench/scale -clickhouse clickhouse://... -clickhouse-cluster NAME [-postgres=false] -passes 5000000
//
// With -clickhouse DSN (and -clickhouse-cluster) each pass also fills a
// ClickHouse database with the same rows (generated there by INSERT ...
// SELECT) and measures, before PostgreSQL: a raw clickhouse-go batch
// insert's rate, the bytes on disk per table (system.parts of every
// shard), yesterday's nightly of the whole org and of the largest
// experiment with the events on ClickHouse (no rollups there: one
// timing), a manual run, dropping the oldest day (Store.DropDay) and one
// user's erasure (Store.DeleteUser). -postgres=false leaves PostgreSQL's
// events empty (the control plane stays there) to reach sizes its disk
// does not hold.
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
	fillWorkers       int    // days filled side by side
	orgNightlyMax     int    // largest size at which the whole org's nightly is timed
	erasure           bool   // measure one user's erasure instead (erasure.go)
	postgres          bool   // fill and measure PostgreSQL (-postgres=false: ClickHouse alone)
	chURL, chCluster  string // -clickhouse: the events on ClickHouse too (clickhouse.go)
	chDatabase        string // a ClickHouse database kept by an earlier -keep run
	chOrgNightlyMax   int    // largest size at which the whole org's nightly is timed on ClickHouse
	chOrgNightlyLimit time.Duration
	chFill            string          // shards (each shard's server writes its local tables) or distributed
	chSteps           map[string]bool // what measure takes on ClickHouse (clickhouse.go)
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
	flag.IntVar(&cfg.fillWorkers, "fill-workers", 2, "days of the bulk fill written side by side")
	flag.IntVar(&cfg.orgNightlyMax, "org-nightly-max", 15_000_000, "time the whole org's nightly only up to this many events (the largest experiment's at every size)")
	flag.BoolVar(&cfg.erasure, "erasure", false, "after each pass, time one user's erasure (the Erasure workflow's steps) instead of the other measurements")
	flag.BoolVar(&cfg.postgres, "postgres", true, "fill and measure the events on PostgreSQL (false: on ClickHouse alone, with -clickhouse)")
	flag.StringVar(&cfg.chURL, "clickhouse", "", "ClickHouse DSN: fill the same events there too and measure them after PostgreSQL's")
	flag.StringVar(&cfg.chCluster, "clickhouse-cluster", "", "the ClickHouse cluster to shard over")
	flag.StringVar(&cfg.chDatabase, "clickhouse-db", "", "with -reuse, continue on this ClickHouse database of an earlier -keep run")
	flag.IntVar(&cfg.chOrgNightlyMax, "clickhouse-org-nightly-max", 1_000_000_000, "time the whole org's nightly on ClickHouse only up to this many events")
	flag.DurationVar(&cfg.chOrgNightlyLimit, "clickhouse-org-nightly-limit", 0, "stop the whole org's nightly on ClickHouse after this long and count the experiments done (0: no limit)")
	flag.StringVar(&cfg.chFill, "clickhouse-fill", "shards", "how the bulk fill reaches ClickHouse: shards (every shard's server generates its own users into its local tables, side by side) or distributed (one INSERT ... SELECT through the Distributed tables)")
	steps := flag.String("clickhouse-steps", "write,disk,largest,drop,erase,org", "what to measure on ClickHouse after each pass, comma-separated, taken in this order: write, disk, largest, drop, erase, org (empty: fill only)")
	flag.Parse()
	if cfg.chFill != "shards" && cfg.chFill != "distributed" {
		log.Fatalf("-clickhouse-fill: %q is neither shards nor distributed", cfg.chFill)
	}
	cfg.chSteps = map[string]bool{}
	for _, f := range strings.Split(*steps, ",") {
		switch f = strings.TrimSpace(f); f {
		case "":
		case "write", "disk", "largest", "drop", "erase", "org":
			cfg.chSteps[f] = true
		default:
			log.Fatalf("-clickhouse-steps: unknown step %q", f)
		}
	}
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
	if cfg.chURL != "" {
		var stop func()
		if env.ch, stop, err = setUpClickHouse(ctx, cfg.chURL, cfg.chCluster, cfg.chDatabase, cfg.keep); err != nil {
			log.Fatal(err)
		}
		defer stop()
		if cfg.chDatabase != "" {
			if err := env.ch.countEvents(ctx); err != nil {
				log.Fatal(err)
			}
		}
	}
	if cfg.erasure {
		fmt.Println("| events | one user's erasure | steps (rows removed, time) |")
		fmt.Println("|---|---|---|")
		for pass := cfg.firstPass; pass < cfg.firstPass+len(cfg.sizes); pass++ {
			if _, _, err := env.fill(ctx, pass); err != nil {
				log.Fatal(err)
			}
			if env.ch != nil {
				if _, _, err := env.fillClickHouse(ctx, pass); err != nil {
					log.Fatal(err)
				}
			}
			m, err := env.erase(ctx, pass)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Println(m.row())
		}
		return
	}
	var chRows []string
	for pass := cfg.firstPass; pass < cfg.firstPass+len(cfg.sizes); pass++ {
		loaded, took, err := env.fill(ctx, pass)
		if err != nil {
			log.Fatal(err)
		}
		if env.ch != nil {
			chLoaded, chTook, err := env.fillClickHouse(ctx, pass)
			if err != nil {
				log.Fatal(err)
			}
			m, err := env.ch.measure(ctx, env, pass)
			if err != nil {
				log.Fatal(err)
			}
			chRows = append(chRows, fmt.Sprintf("%s %.0f |", m.row(), float64(chLoaded)/chTook.Seconds()))
			fmt.Println("clickhouse: " + chRows[len(chRows)-1])
		}
		if !cfg.postgres {
			continue
		}
		m, err := env.measure(ctx, pass)
		if err != nil {
			log.Fatal(err)
		}
		org := "not measured"
		if m.orgCold > 0 {
			org = fmt.Sprintf("%s / %s (%d runs)", m.orgCold.Round(time.Second), m.orgWarm.Round(time.Second), m.orgRuns)
		}
		fmt.Printf("postgresql: | %d | %.0f | %.0f | %s | %s | %s | %s | %s / %s (%d users) | %s | %s (%d) |\n",
			m.events, float64(loaded)/took.Seconds(), m.ingestRate, mib(m.eventsTable), mib(m.eventsIndexes), mib(m.idsTotal),
			org, m.largestCold.Round(100*time.Millisecond), m.largestWarm.Round(100*time.Millisecond), m.largestUsers,
			m.largestManual.Round(100*time.Millisecond), m.dropDay.Round(100*time.Millisecond), m.dropRows)
	}
	if cfg.postgres {
		fmt.Println("PostgreSQL (rows prefixed postgresql: above):")
		fmt.Println("| events | bulk load rows/s | ingest events/s | events table | events indexes | event_ids (table+index) | nightly, whole org, cold / warm | nightly, largest experiment, cold / warm | manual run, largest experiment | drop one day (rows) |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	}
	if len(chRows) > 0 {
		fmt.Println("ClickHouse:")
		fmt.Println("| events | raw insert events/s: filled / fresh database (ratio) | on disk per table | nightly, whole org | nightly, largest experiment | manual run, largest experiment | drop one day (rows) | erase a user of the fill (rows); the heavy user (rows of events) | bulk load rows/s |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|")
		for _, r := range chRows {
			fmt.Println(r)
		}
	}
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
