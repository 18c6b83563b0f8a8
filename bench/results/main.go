// Command results benchmarks one full results run against the bare SQL
// aggregation of the same per-user values, on PostgreSQL (DATABASE_URL).
//
// It creates a schema of its own, fills one experiment with -users users
// and -per-user events each (an exposure, model calls, one business
// event) spread over 14 days, then times, in the same session:
//
//   - bare SQL: the aggregation statement of a run without CUPED and with
//     p95 latency as a per-user mean (the statement before issue 12),
//     computed in the database (SELECT count(*) over it) and read out row
//     by row, before and after the full run (the faster kept);
//
//   - full run: the ExperimentResults workflow on an in-process Temporal
//     server with a real worker (load, aggregate with CUPED pre-period from
//     day rollups plus the open day, per-call p95 read, statistics for 6
//     metrics, coverage count, Benjamini–Hochberg, upsert), -runs times:
//     the first rolls up the ended days, later ones reuse them as a manual
//     run after the nightly runs does; and the process's peak RSS (VmHWM)
//     after them;
//
//   - with -phases, the run's steps one by one outside the workflow
//     (aggregation, statistics, coverage count);
//
//   - with -ramp, the same -runs full runs again after a second version
//     that changes the allocation (its targeting, so the data's 50/50
//     split still holds) is dated to the middle of the window: the same
//     data in two phases, so the SRM check runs per phase and the
//     welch_t and z_test metrics are stratified (docs/results.md,
//     "Phases"), against the one-phase runs of the same session;
//
//   - with -power, the power answers over the same data (package power,
//     docs/power.md): GET /v1/experiments/{id}/power's (the experiment's
//     own data, days=14) and POST /v1/power's (a draft of the same config
//     planned from the org's recent data), -runs times each, against the
//     full runs and the bare SQL of the same session.
//
//   - with -clickhouse DSN (and -clickhouse-cluster), the events and
//     scores written into a fresh ClickHouse database (read with
//     eventcopy's keyset, written with raw batch inserts: the rate
//     printed) and each full run repeated with the events on ClickHouse
//     right after the one on PostgreSQL, interleaved, with the ratio of
//     each pair; -keep keeps that database too, -clickhouse-db NAME reuses
//     it with -schema.
//
// Loading 1,000,000 users takes minutes: -keep keeps the schema and prints
// its name, -schema NAME times a kept one again.
//
// Usage: DATABASE_URL=postgres://... go run ./bench/results [-users 1000000] [-runs 2] [-phases] [-ramp] [-power] [-keep | -schema bench_...] [-clickhouse clickhouse://... [-clickhouse-cluster NAME] [-clickhouse-db bench_...]]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	servertest "go.temporal.io/server/temporaltest"
	"gorm.io/gorm"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/bench/benchseed"
	"github.com/expd/expd/clickhouse"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/phases"
	"github.com/expd/expd/power"
	"github.com/expd/expd/results"
	"github.com/expd/expd/worker"
	"github.com/expd/expd/workflows"
)

func main() {
	users := flag.Int("users", 1_000_000, "users in the experiment (half per arm)")
	perUser := flag.Int("per-user", 10, "events per user: 1 exposure, per-user-2 model calls, 1 business event")
	keep := flag.Bool("keep", false, "keep the benchmark schema (its name is printed)")
	schema := flag.String("schema", "", "time a schema kept by an earlier -keep run instead of loading one")
	runs := flag.Int("runs", 2, "full runs to time (the first rolls up the ended days)")
	phases := flag.Bool("phases", false, "also time the run's steps one by one")
	ramp := flag.Bool("ramp", false, "then change the allocation mid-window and time -runs runs over the two phases")
	powerAnswers := flag.Bool("power", false, "also time the power answers (the experiment's and a draft's) over the same data")
	flag.StringVar(&chURL, "clickhouse", "", "ClickHouse DSN: also time each full run with the events copied there")
	flag.StringVar(&chCluster, "clickhouse-cluster", "", "the ClickHouse cluster to shard over")
	flag.StringVar(&chDatabase, "clickhouse-db", "", "time a ClickHouse database kept by an earlier -keep run instead of filling one")
	flag.StringVar(&chProfile, "clickhouse-cpuprofile", "", "write a CPU profile of the process during the runs on ClickHouse to this file")
	flag.Parse()
	if err := run(*users, *perUser, *keep, *schema, *runs, *phases, *ramp, *powerAnswers); err != nil {
		log.Fatal(err)
	}
}

func run(users, perUser int, keep bool, schema string, runs int, phases, ramp, powerAnswers bool) error {
	ctx := context.Background()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		return fmt.Errorf("set DATABASE_URL to a PostgreSQL database")
	}
	var f fixture
	var db *gorm.DB
	if schema != "" {
		var err error
		if db, err = reopenSchema(base, schema); err != nil {
			return err
		}
		if f, err = loaded(ctx, db, schema); err != nil {
			return err
		}
	} else {
		var drop func()
		var err error
		db, schema, drop, err = benchseed.OpenSchema(base, keep)
		if err != nil {
			return err
		}
		defer drop()
		if f, err = seed(ctx, db, users, perUser); err != nil {
			return err
		}
		f.schema = schema
		log.Printf("schema %s: seeded %d users, %d events in %s", schema, users, users*perUser, f.seedTime.Round(time.Millisecond))
	}
	var events int64
	if err := db.Raw("SELECT count(*) FROM events").Scan(&events).Error; err != nil {
		return err
	}

	var ch *clickhouse.Store
	if chURL != "" {
		var stop func()
		var err error
		if ch, stop, err = openClickHouse(ctx, db, chURL, chCluster, keep); err != nil {
			return err
		}
		defer stop()
	}
	var chFulls []time.Duration

	// Bare SQL is timed before and after the full run and the faster of
	// the two kept, so the cache warms neither side alone.
	bareCount, bareRead, err := timeBareSQL(ctx, db, f)
	if err != nil {
		return err
	}
	var fulls []time.Duration
	var outs []workflows.ExperimentResultsResult
	var rolled []int64
	var labels []string
	total := runs
	if ramp {
		total = 2 * runs
	}
	for i := 0; i < total; i++ {
		label := "one phase"
		if i >= runs {
			label = "two phases"
		}
		if ramp && i == runs {
			if err := changeAllocation(ctx, db, f); err != nil {
				return err
			}
		}
		began := time.Now()
		full, out, err := timeFullRun(ctx, db, f, &activities.Activities{DB: db})
		if err != nil {
			return err
		}
		if ch != nil {
			time.Sleep(time.Second) // manual runs are keyed by their second
			stopProfile, err := startProfile(chProfile)
			if err != nil {
				return err
			}
			chFull, chOut, err := timeFullRun(ctx, db, f, &activities.Activities{DB: db, Events: ch, Aggregator: ch})
			stopProfile()
			if err != nil {
				return err
			}
			if chOut.Users != out.Users || chOut.Rows != out.Rows {
				return fmt.Errorf("run on clickhouse: %d users, %d rows; on postgresql %d, %d", chOut.Users, chOut.Rows, out.Users, out.Rows)
			}
			chFulls = append(chFulls, chFull)
			log.Printf("full run %d on clickhouse: %s", i+1, chFull.Round(time.Millisecond))
		}
		var n int64
		if err := db.Raw("SELECT count(*) FROM result_rollup_days WHERE experiment_id = ? AND rolled_at >= ?", f.expID, began).Scan(&n).Error; err != nil {
			return err
		}
		fulls, outs, rolled, labels = append(fulls, full), append(outs, out), append(rolled, n), append(labels, label)
		log.Printf("full run %d (%s): %s", i+1, label, full.Round(time.Millisecond))
		// Manual runs are keyed by their second.
		time.Sleep(time.Second)
	}
	if phases {
		if err := timePhases(ctx, db, f); err != nil {
			return err
		}
	}
	var powers []powerTiming
	if powerAnswers {
		if powers, err = timePower(ctx, db, f, runs); err != nil {
			return err
		}
	}
	count2, read2, err := timeBareSQL(ctx, db, f)
	if err != nil {
		return err
	}
	bareCount, bareRead = min(bareCount, count2), min(bareRead, read2)
	fmt.Printf("schema=%s users=%d events=%d metrics=%d\n", f.schema, outs[0].Users, events, len(f.cfgMetrics))
	fmt.Printf("bare SQL aggregation (in database):  %s\n", bareCount.Round(time.Millisecond))
	fmt.Printf("bare SQL aggregation (rows read out): %s\n", bareRead.Round(time.Millisecond))
	for i, full := range fulls {
		out := outs[i]
		fmt.Printf("full run %d (workflow, %s):   %s  (%d users, %d rows, SRM %s; days rolled up by it: %d)\n",
			i+1, labels[i], full.Round(time.Millisecond), out.Users, out.Rows, out.SRMGate, rolled[i])
		fmt.Printf("  ratio full / bare (rows read out):  %.2f\n", full.Seconds()/bareRead.Seconds())
		fmt.Printf("  ratio full / bare (in database):    %.2f\n", full.Seconds()/bareCount.Seconds())
		if i < len(chFulls) {
			fmt.Printf("  the same run on ClickHouse (%d shard(s)): %s; PostgreSQL / ClickHouse: %.2f\n",
				ch.Shards(), chFulls[i].Round(time.Millisecond), full.Seconds()/chFulls[i].Seconds())
		}
	}
	if ramp {
		// Steady state: the fastest run of each kind after the first
		// (which rolls up the ended days).
		best := func(from, to int) time.Duration {
			b := fulls[from]
			for _, d := range fulls[from:to] {
				b = min(b, d)
			}
			return b
		}
		one, two := best(min(1, runs-1), runs), best(runs, 2*runs)
		fmt.Printf("two phases / one phase (fastest steady-state runs): %s / %s = %.2f\n", two.Round(time.Millisecond), one.Round(time.Millisecond), two.Seconds()/one.Seconds())
	}
	for _, p := range powers {
		fmt.Printf("power, %s: %s fastest of %d  (%s)\n", p.label, p.best.Round(time.Millisecond), runs, p.note)
		fmt.Printf("  ratio power / full run 1:              %.2f\n", p.best.Seconds()/fulls[0].Seconds())
		fmt.Printf("  ratio power / bare (rows read out):    %.2f\n", p.best.Seconds()/bareRead.Seconds())
	}
	fmt.Printf("peak RSS of the process (worker in-process): %s\n", peakRSS())
	return nil
}

// changeAllocation stores a second version of the experiment whose
// allocation differs from the first by its targeting (everyone still
// matches, and the data's 50/50 split stays the weights in force), dated
// to the middle of the window: the runs that follow see two phases of
// about half the users each.
func changeAllocation(ctx context.Context, db *gorm.DB, f fixture) error {
	store := experiments.Store{DB: db}
	exp, err := store.Get(ctx, f.orgID, f.expID)
	if err != nil {
		return err
	}
	if exp.Version > 1 {
		return nil // a kept schema already ramped
	}
	cfg := exp.Config
	cfg.Targeting = json.RawMessage(`{}`)
	next, err := store.Update(ctx, f.orgID, f.expID, "bench", cfg)
	if err != nil {
		return fmt.Errorf("change the allocation: %w", err)
	}
	mid := f.window.Start.Add(f.window.End.Sub(f.window.Start) / 2)
	if err := db.Model(&experiments.VersionRow{}).Where("experiment_id = ? AND version = ?", f.expID, next.Version).Update("created_at", mid).Error; err != nil {
		return err
	}
	phases, err := phases.Of(ctx, db, f.orgID, f.expID, f.window.Start, time.Now())
	if err != nil {
		return err
	}
	log.Printf("allocation changed at %s: %d phases", mid.Format(time.RFC3339), len(phases))
	return nil
}

// timePhases times the steps of a manual run's analysis one by one, as
// AnalyzeExperiment runs them (the rollups being in place).
func timePhases(ctx context.Context, db *gorm.DB, f fixture) error {
	now := time.Now()
	p, err := results.LoadDesign(ctx, db, f.orgID, f.expID, results.ManualKey(now).WindowEnd)
	if err != nil {
		return err
	}
	d := p.Design
	var quantile []metrics.Resolved
	var others []metrics.Resolved
	for _, m := range d.Metrics {
		if m.Kind == "quantile" {
			quantile = append(quantile, m)
		} else {
			others = append(others, m)
		}
	}
	step := func(name string, fn func() error) error {
		start := time.Now()
		err := fn()
		log.Printf("phase %-40s %s", name, time.Since(start).Round(time.Millisecond))
		return err
	}
	if err := step("aggregate, quantile metrics left out", func() error {
		_, use, err := results.AggregateIncremental(ctx, db, f.orgID, f.expID, d.Window, d.Arms(), others, now, nil)
		log.Printf("rollups: %+v", use)
		return err
	}); err != nil {
		return err
	}
	if err := step("aggregate, the quantile metric only", func() error {
		_, _, err := results.AggregateIncremental(ctx, db, f.orgID, f.expID, d.Window, d.Arms(), quantile, now, nil)
		return err
	}); err != nil {
		return err
	}
	var sample results.Sample
	if err := step("aggregate, every metric", func() error {
		var err error
		sample, _, err = results.AggregateIncremental(ctx, db, f.orgID, f.expID, d.Window, d.Arms(), d.Metrics, now, nil)
		return err
	}); err != nil {
		return err
	}
	if err := step("statistics (results.Analyze)", func() error {
		_, err := results.Analyze(d, sample, now, nil)
		return err
	}); err != nil {
		return err
	}
	return step("coverage count (results.CountCoverage)", func() error {
		_, err := results.CountCoverage(ctx, db, f.orgID, f.expID, d.Window, d.Arms())
		return err
	})
}

// peakRSS is the process's VmHWM from /proc/self/status.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// bareMetrics are the benchmark's metrics as a run before issue 12 would
// aggregate them: no CUPED pre-period, p95 latency as a per-user mean.
func bareMetrics(ms []metrics.Resolved) []metrics.Resolved {
	off := false
	out := make([]metrics.Resolved, len(ms))
	for i, m := range ms {
		m.CUPED = &off
		if m.Kind == "quantile" {
			m.Kind, m.MethodDefault, m.Quantile = "mean", "mann_whitney", nil
		}
		out[i] = m
	}
	return out
}

// timeBareSQL times the run's own aggregation statement twice: computed
// entirely in the database, and with every per-user row read by the client.
func timeBareSQL(ctx context.Context, db *gorm.DB, f fixture) (inDB, readOut time.Duration, err error) {
	ms, err := metrics.Resolve(ctx, metrics.Store{DB: db}, f.orgID, f.cfgMetrics)
	if err != nil {
		return 0, 0, err
	}
	sql, args, err := results.AggregateSQL(db, f.orgID, f.expID, f.window, bareMetrics(ms))
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	var n int64
	if err := db.WithContext(ctx).Raw("SELECT count(*) FROM ("+sql+") q", args...).Scan(&n).Error; err != nil {
		return 0, 0, fmt.Errorf("bare aggregation: %w", err)
	}
	inDB = time.Since(start)
	start = time.Now()
	rows, err := db.WithContext(ctx).Raw(sql, args...).Rows()
	if err != nil {
		return 0, 0, fmt.Errorf("bare aggregation rows: %w", err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	dest := make([]any, len(cols))
	for i := range dest {
		dest[i] = new(any)
	}
	read := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return 0, 0, err
		}
		read++
	}
	readOut = time.Since(start)
	log.Printf("bare aggregation: %d users", read)
	return inDB, readOut, rows.Err()
}

// timeFullRun runs ExperimentResults on an in-process Temporal server.
func timeFullRun(ctx context.Context, db *gorm.DB, f fixture, acts *activities.Activities) (time.Duration, workflows.ExperimentResultsResult, error) {
	srv := servertest.NewServer()
	defer srv.Stop()
	c := srv.GetDefaultClient()
	const queue = "bench-results"
	w := srv.NewWorker(queue, func(r sdkworker.Registry) { worker.Register(r, acts) })
	defer w.Stop()
	key := results.ManualKey(time.Now())
	start := time.Now()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.ResultsWorkflowID(f.expID, key.ComputedFor), TaskQueue: queue},
		workflows.ExperimentResults, workflows.ExperimentResultsInput{OrgID: f.orgID, ExperimentID: f.expID, ComputedFor: key.ComputedFor})
	if err != nil {
		return 0, workflows.ExperimentResultsResult{}, err
	}
	var out workflows.ExperimentResultsResult
	err = run.Get(ctx, &out)
	return time.Since(start), out, err
}

// powerTiming is the fastest of -runs power answers of one kind.
type powerTiming struct {
	label, note string
	best        time.Duration
}

// timePower times the two power answers over the fixture's data, as the
// routes compute them: the experiment's (its own data, days=14) and a
// draft's of the same config (the org's recent data).
func timePower(ctx context.Context, db *gorm.DB, f fixture, runs int) ([]powerTiming, error) {
	r := power.Reader{DB: db, Aggregator: results.SQL{DB: db}}
	exp, err := experiments.Store{DB: db}.Get(ctx, f.orgID, f.expID)
	if err != nil {
		return nil, err
	}
	q := power.Question{Days: power.DefaultDays}
	kinds := []struct {
		label  string
		answer func() (power.Answer, error)
	}{
		{"experiment (GET /v1/experiments/{id}/power?days=14)", func() (power.Answer, error) {
			return r.ForExperiment(ctx, f.orgID, exp, q, "", time.Now().UTC())
		}},
		{"draft (POST /v1/power?days=14)", func() (power.Answer, error) {
			return r.ForDraft(ctx, f.orgID, &exp.Config, q, "", time.Now().UTC())
		}},
	}
	var out []powerTiming
	for _, k := range kinds {
		t := powerTiming{label: k.label}
		for i := range max(runs, 1) {
			began := time.Now()
			a, err := k.answer()
			if err != nil {
				return nil, fmt.Errorf("power, %s: %w", k.label, err)
			}
			d := time.Since(began)
			if i == 0 || d < t.best {
				t.best = d
			}
			if len(a.Metrics) == 0 || a.Metrics[0].FixedHorizon == nil {
				return nil, fmt.Errorf("power, %s: no numbers: %+v", k.label, a.Metrics)
			}
			m := a.Metrics[0]
			t.note = fmt.Sprintf("%d exposed users, %s vs control: fixed-horizon MDE %.4g, sequential %.4g, sequential cost %.2fx", a.ExposedUsers, m.Variant, m.FixedHorizon.MDE, m.Sequential.MDE, *m.SequentialCost)
			log.Printf("power %d, %s: %s", i+1, k.label, d.Round(time.Millisecond))
		}
		out = append(out, t)
	}
	return out, nil
}
