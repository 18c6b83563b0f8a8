package main

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	servertest "go.temporal.io/server/temporaltest"
	"golang.org/x/sync/errgroup"
	"gorm.io/gorm"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/database"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/results"
	"github.com/expd/expd/vocab"
	"github.com/expd/expd/worker"
	"github.com/expd/expd/workflowclient"
	"github.com/expd/expd/workflows"
)

type env struct {
	cfg      config
	db       *gorm.DB
	orgID    string
	expIDs   []string
	today    time.Time
	events   int64
	ch       *chEnv // -clickhouse: the same org's events on ClickHouse too
	tearDown func()
}

func setUp(ctx context.Context, base string, cfg config) (*env, error) {
	if cfg.reuse != "" {
		return reuse(ctx, base, cfg)
	}
	dsn, drop, err := database.NewSchema(base, "scale_")
	if err != nil {
		return nil, err
	}
	e := &env{cfg: cfg, today: ingest.DayOf(time.Now()), tearDown: func() {
		if !cfg.keep {
			_ = drop()
		}
	}}
	if e.db, err = database.Open(dsn, ""); err != nil {
		return nil, err
	}
	if _, err := database.Migrate(e.db); err != nil {
		return nil, err
	}
	// The maintenance workflow's function, for the past days of the load.
	if _, err := ingest.EnsurePartitions(ctx, e.db, e.today.AddDate(0, 0, -cfg.days), e.today); err != nil {
		return nil, err
	}
	org, err := orgs.Ensure(ctx, e.db, "org_scale", "scale")
	if err != nil {
		return nil, err
	}
	e.orgID = org.ID
	if err := e.db.Model(&orgs.Org{}).Where("id = ?", org.ID).Update("plan", plans.Enterprise).Error; err != nil {
		return nil, err
	}
	shared := false
	purchase := experiments.MetricSource{EventType: "business_event", BusinessMetric: "purchase"}
	cfgMetrics := []experiments.Metric{
		{Name: "latency_ms", Kind: "mean", Category: "guardrail", MethodDefault: "welch_t", MetricVersion: 1, SharedOrgWide: &shared},
		{Name: "error_rate", Kind: "mean", Category: "guardrail", MethodDefault: "welch_t", MetricVersion: 1, SharedOrgWide: &shared},
		{Name: "conversion", Kind: "proportion", Category: "primary", MethodDefault: "z_test", MetricVersion: 1, SharedOrgWide: &shared, Source: &purchase},
		{Name: "revenue", Kind: "sum", Category: "secondary", MethodDefault: "welch_t", MetricVersion: 1, SharedOrgWide: &shared, Source: &purchase},
	}
	began := e.today.AddDate(0, 0, -cfg.days)
	for i := range cfg.experiments {
		exp, err := experiments.Store{DB: e.db}.Create(ctx, org.ID, "scale", experiments.Config{
			Name: fmt.Sprintf("exp-%03d", i), Salt: fmt.Sprintf("scale-salt-%03d", i), BucketCount: 10000,
			Allocation: []bucketing.Slice{{Variant: "control", Weight: 50}, {Variant: "treatment", Weight: 50}},
			Metrics:    cfgMetrics,
		})
		if err != nil {
			return nil, fmt.Errorf("create experiment: %w", err)
		}
		e.expIDs = append(e.expIDs, exp.ID)
	}
	for table, col := range map[string]string{"experiments": "org_id", "experiment_versions": "org_id"} {
		if err := e.db.Exec("UPDATE "+table+" SET created_at = ? WHERE "+col+" = ?", began, org.ID).Error; err != nil {
			return nil, err
		}
	}
	return e, nil
}

// reuse continues on the schema a previous run kept (-keep, or a run
// stopped before its end): its org, experiments and events.
func reuse(ctx context.Context, base string, cfg config) (*env, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	q.Set("search_path", cfg.reuse)
	u.RawQuery = q.Encode()
	e := &env{cfg: cfg, today: ingest.DayOf(time.Now()), tearDown: func() {}}
	if e.db, err = database.Open(u.String(), ""); err != nil {
		return nil, err
	}
	if _, err := database.Migrate(e.db); err != nil { // migrations newer than the run
		return nil, err
	}
	if err := e.db.WithContext(ctx).Raw(`SELECT id FROM orgs LIMIT 1`).Scan(&e.orgID).Error; err != nil || e.orgID == "" {
		return nil, fmt.Errorf("find the org in %s: %v", cfg.reuse, err)
	}
	if err := e.db.WithContext(ctx).Raw(`SELECT id FROM experiments WHERE org_id = ? ORDER BY name`, e.orgID).Scan(&e.expIDs).Error; err != nil {
		return nil, err
	}
	if err := e.db.WithContext(ctx).Raw(`SELECT count(*) FROM event_ids`).Scan(&e.events).Error; err != nil {
		return nil, err
	}
	log.Printf("reusing %s: %d experiments, %d events", cfg.reuse, len(e.expIDs), e.events)
	return e, nil
}

// fill adds one pass of events, day by day, each day in one statement
// that writes events and their ids. Every user has ten events on one
// day: an exposure, eight model calls, a business event.
func (e *env) fill(ctx context.Context, pass int) (int64, time.Duration, error) {
	perDay := e.cfg.sizes[pass-e.cfg.firstPass] / e.cfg.days
	if !e.cfg.postgres {
		return 0, 0, nil
	}
	// The previous pass's retention measurement dropped the oldest day:
	// create it again so its rows land in a day partition, not the default.
	if _, err := ingest.EnsurePartitions(ctx, e.db, e.today.AddDate(0, 0, -e.cfg.days), e.today); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	var n atomic.Int64
	// Days go to separate partitions, so -fill-workers statements run side
	// by side without touching each other's pages (PostgreSQL runs each
	// INSERT ... SELECT on one core).
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, e.cfg.fillWorkers))
	for d := e.cfg.days; d >= 1; d-- {
		g.Go(func() error {
			day := e.today.AddDate(0, 0, -d)
			rows, err := e.fillDay(gctx, pass, d, day, perDay)
			if err != nil {
				return fmt.Errorf("fill day %s: %w", day.Format(time.DateOnly), err)
			}
			log.Printf("pass %d: day %s filled (%d events this pass, %s)", pass, day.Format(time.DateOnly), n.Add(rows), time.Since(start).Round(time.Second))
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return n.Load(), 0, err
	}
	took := time.Since(start)
	e.events += n.Load()
	log.Printf("pass %d: %d events in %s", pass, n.Load(), took.Round(time.Second))
	if err := e.db.Exec("VACUUM ANALYZE events").Error; err != nil {
		return n.Load(), took, err
	}
	return n.Load(), took, e.db.Exec("VACUUM ANALYZE event_ids").Error
}

// fillClickHouse adds one pass of events to ClickHouse, day by day: the
// rows fill gives PostgreSQL, generated on the server.
func (e *env) fillClickHouse(ctx context.Context, pass int) (int64, time.Duration, error) {
	perDay := e.cfg.sizes[pass-e.cfg.firstPass] / e.cfg.days
	start := time.Now()
	for d := e.cfg.days; d >= 1; d-- {
		day := e.today.AddDate(0, 0, -d)
		if err := e.ch.fillDay(ctx, e, pass, d, day, perDay); err != nil {
			return 0, 0, fmt.Errorf("fill day %s on clickhouse: %w", day.Format(time.DateOnly), err)
		}
		if perDay > 0 {
			log.Printf("pass %d: day %s filled on clickhouse (%d events this pass, %s)", pass, day.Format(time.DateOnly), perDay*(e.cfg.days-d+1), time.Since(start).Round(time.Second))
		}
	}
	took := time.Since(start)
	log.Printf("pass %d: %d events on clickhouse in %s (%s fill: %.0f events/s)", pass, perDay*e.cfg.days, took.Round(time.Second),
		e.cfg.chFill, float64(perDay*e.cfg.days)/took.Seconds())
	return int64(perDay * e.cfg.days), took, nil
}

// fillDay writes one day of one pass, events and their ids, in one
// statement.
func (e *env) fillDay(ctx context.Context, pass, d int, day time.Time, perDay int) (int64, error) {
	res := e.db.WithContext(ctx).Exec(`WITH ins AS (
INSERT INTO events (org_id, event_id, type, experiment_id, user_id, variant, ts, received_at, model,
  latency_ms, input_tokens, output_tokens, total_tokens, cost_usd, error, business_metric, value, prompt, response, source)
SELECT ?::uuid, ? || i, CASE WHEN k = 0 THEN 'exposure' WHEN k = 9 THEN 'business_event' ELSE 'model_call' END,
  (?::uuid[])[1 + CASE WHEN u % 10 = 0 THEN 0 ELSE 1 + u % (? - 1) END], ? || u,
  CASE WHEN u % 2 = 0 THEN 'control' ELSE 'treatment' END, ts, ts,
  CASE WHEN k BETWEEN 1 AND 8 THEN 'gpt-4o-mini' END,
  CASE WHEN k BETWEEN 1 AND 8 THEN 200 + (u % 2) * 5 + random() * 100 END,
  CASE WHEN k BETWEEN 1 AND 8 THEN 120 + i % 50 END, CASE WHEN k BETWEEN 1 AND 8 THEN 40 + i % 30 END,
  CASE WHEN k BETWEEN 1 AND 8 THEN 160 + i % 80 END, CASE WHEN k BETWEEN 1 AND 8 THEN 0.00042 END,
  CASE WHEN k BETWEEN 1 AND 8 AND random() < 0.02 THEN 'timeout' END,
  CASE WHEN k = 9 THEN CASE WHEN random() < 0.2 + (u % 2) * 0.02 THEN 'purchase' ELSE 'visit' END END,
  CASE WHEN k = 9 THEN random() * 50 END,
  CASE WHEN k BETWEEN 1 AND 8 THEN 'You are a helpful support agent. Answer briefly.' END,
  CASE WHEN k BETWEEN 1 AND 8 THEN 'You can reset your password from the account page.' END, 'api'
FROM generate_series(0, ? - 1) AS i,
  LATERAL (SELECT i / 10 AS u, i % 10 AS k) x,
  LATERAL (SELECT ?::timestamptz + ((i / 10) % 86000) * interval '1 second' + (i % 10) * interval '1 second' AS ts) t
RETURNING org_id, event_id, ts)
INSERT INTO event_ids (org_id, event_id, ts) SELECT org_id, event_id, ts FROM ins`,
		e.orgID, fmt.Sprintf("p%d-d%d-", pass, d), "{"+strings.Join(e.expIDs, ",")+"}", len(e.expIDs), fmt.Sprintf("p%d-d%d-u", pass, d), perDay, day)
	return res.RowsAffected, res.Error
}

type measurement struct {
	events                     int64
	ingestRate                 float64
	eventsTable, eventsIndexes int64
	idsTotal                   int64
	orgCold, orgWarm           time.Duration // 0: not measured at this size (-org-nightly-max)
	orgRuns                    int
	largestCold, largestWarm   time.Duration // the largest experiment's nightly alone
	largestManual              time.Duration
	largestUsers               int
	dropDay                    time.Duration
	dropRows                   int64
}

func (e *env) measure(ctx context.Context, pass int) (measurement, error) {
	var m measurement
	var err error
	if m.ingestRate, err = e.ingest(ctx, pass); err != nil {
		return m, err
	}
	m.events = e.events
	if err := e.db.Raw(`SELECT coalesce(sum(pg_table_size(inhrelid)), 0), coalesce(sum(pg_indexes_size(inhrelid)), 0)
FROM pg_inherits WHERE inhparent = 'events'::regclass`).Row().Scan(&m.eventsTable, &m.eventsIndexes); err != nil {
		return m, err
	}
	if err := e.db.Raw(`SELECT pg_total_relation_size('event_ids')`).Row().Scan(&m.idsTotal); err != nil {
		return m, err
	}
	log.Printf("pass %d: %d events; ingest %.0f events/s; events %s + indexes %s; event_ids %s",
		pass, m.events, m.ingestRate, mib(m.eventsTable), mib(m.eventsIndexes), mib(m.idsTotal))
	if err := e.nightlies(ctx, pass, &m); err != nil {
		return m, err
	}
	parts, err := ingest.ListPartitions(ctx, e.db)
	if err != nil || len(parts) == 0 {
		return m, fmt.Errorf("list partitions: %v (%d)", err, len(parts))
	}
	start := time.Now()
	if m.dropRows, err = ingest.DropPartition(ctx, e.db, parts[0]); err != nil {
		return m, err
	}
	m.dropDay = time.Since(start)
	e.events -= m.dropRows
	return m, nil
}

// ingest writes cfg.ingest events of today through the real write path.
func (e *env) ingest(ctx context.Context, pass int) (float64, error) {
	w := ingest.NewWriter(e.db, ingest.Options{})
	tenant := ingest.Tenant{OrgID: e.orgID, Plan: plans.Enterprise}
	rate, err := e.ingestRows(ctx, pass, "", 500, func(ctx context.Context, rows []ingest.EventRow) error {
		_, err := w.Write(ctx, ingest.Batch{Tenant: tenant, Rows: rows})
		return err
	})
	e.events += int64(e.cfg.ingest / 8 * 8)
	return rate, err
}

// ingestRows writes cfg.ingest model calls of today (ids prefixed) from 8
// concurrent writers in batches, through write, and returns the rate.
func (e *env) ingestRows(ctx context.Context, pass int, prefix string, batch int, write func(context.Context, []ingest.EventRow) error) (float64, error) {
	const writers = 8
	now := time.Now().UTC()
	per := e.cfg.ingest / writers
	start := time.Now()
	eg, ctx := errgroup.WithContext(ctx)
	for g := range writers {
		eg.Go(func() error {
			rng := rand.New(rand.NewPCG(uint64(pass), uint64(g)))
			for off := 0; off < per; off += batch {
				rows := make([]ingest.EventRow, 0, batch)
				for i := off; i < min(off+batch, per); i++ {
					lat, tokens := 200+rng.Float64()*100, int64(160+i%80)
					rows = append(rows, ingest.EventRow{OrgID: e.orgID, EventID: fmt.Sprintf("%slive-p%d-g%d-%d", prefix, pass, g, i),
						Type: "model_call", ExperimentID: e.expIDs[rng.IntN(len(e.expIDs))], UserID: fmt.Sprintf("live-%d", i/10),
						Variant: "control", Ts: now.Add(-time.Duration(rng.IntN(3600)) * time.Second),
						ModelCall: vocab.ModelCall{LatencyMs: &lat, TotalTokens: &tokens}, Source: ingest.SourceAPI, ReceivedAt: now})
				}
				if err := write(ctx, rows); err != nil {
					return err
				}
			}
			return nil
		})
	}
	err := eg.Wait()
	return float64(per*writers) / time.Since(start).Seconds(), err
}

// nightlies times, on an in-process Temporal server, yesterday's nightly
// run cold (no rollups: every ended day of the window rolled up, roughly
// what each night cost before incremental results) and warm (the steady
// state: stored rollups plus one day), for the whole org while it holds
// at most -org-nightly-max events and for the largest experiment alone
// at every size; then a manual run of the largest experiment. The bulk
// fill writes past days without raising their day marks, so the rollups
// of the previous pass go first.
func (e *env) nightlies(ctx context.Context, pass int, m *measurement) error {
	if err := e.clear("", nil, rollupTables...); err != nil {
		return err
	}
	day := e.today.AddDate(0, 0, -1).Format(time.DateOnly)
	if err := e.nightlyPhase(ctx, pass, day, "cold", &m.orgCold, &m.largestCold, m); err != nil {
		return err
	}
	if err := e.nightlyPhase(ctx, pass, day, "warm", &m.orgWarm, &m.largestWarm, m); err != nil {
		return err
	}
	c, queue, stop, err := startTemporal(ctx, &activities.Activities{DB: e.db})
	if err != nil {
		return err
	}
	defer stop()
	took, _, err := e.experimentRun(ctx, c, queue, results.ManualKey(time.Now()).ComputedFor)
	if err != nil {
		return fmt.Errorf("largest experiment, manual: %w", err)
	}
	m.largestManual = took
	return nil
}

// nightlyPhase times one phase (cold or warm) of yesterday's nightly: the
// whole org's (while it is small enough) into org, then the largest
// experiment's alone into largest. A fresh server per phase: DailyResults
// counts a child whose workflow id already ran as done.
func (e *env) nightlyPhase(ctx context.Context, pass int, day, label string, org, largest *time.Duration, m *measurement) error {
	c, queue, stop, err := startTemporal(ctx, &activities.Activities{DB: e.db})
	if err != nil {
		return err
	}
	defer stop()
	if e.events <= int64(e.cfg.orgNightlyMax) {
		took, runs, _, err := e.orgNightly(ctx, c, queue, day, fmt.Sprintf("%d-%s", pass, label), 0)
		if err != nil {
			return err
		}
		*org, m.orgRuns = took, runs
	}
	// The org's run computed the largest experiment too: clear its day
	// (and, cold, its rollups) so the timed run below does the same work
	// alone.
	if err := e.clear("", nil, runTables...); err != nil {
		return err
	}
	if label == "cold" {
		if err := e.clear("experiment_id = ?", []any{e.expIDs[0]}, rollupTables...); err != nil {
			return err
		}
	}
	took, users, err := e.experimentRun(ctx, c, queue, day)
	if err != nil {
		return fmt.Errorf("largest experiment, %s: %w", label, err)
	}
	*largest, m.largestUsers = took, users
	log.Printf("pass %d: largest experiment nightly (%s): %d users in %s", pass, label, users, took.Round(time.Millisecond))
	return nil
}

// startTemporal starts an in-process Temporal server with expd's search
// attributes (without them the workflow task that starts the children
// fails, and is retried forever) and a worker.
func startTemporal(ctx context.Context, acts *activities.Activities) (client.Client, string, func(), error) {
	srv := servertest.NewServer()
	c := srv.GetDefaultClient()
	if err := workflowclient.EnsureSearchAttributes(ctx, c, srv.GetDefaultNamespace()); err != nil {
		srv.Stop()
		return nil, "", nil, err
	}
	const queue = "bench-scale"
	w := srv.NewWorker(queue, func(r sdkworker.Registry) { worker.Register(r, acts) })
	return c, queue, func() { w.Stop(); srv.Stop() }, nil
}

// The tables a run writes, and those its rollups live in.
var (
	runTables    = []string{"results", "result_staging", "result_runs"}
	rollupTables = []string{"result_rollups", "result_rollup_days"}
)

// clear deletes the rows of tables that match where (every row when where
// is empty).
func (e *env) clear(where string, args []any, tables ...string) error {
	for _, t := range tables {
		q := "DELETE FROM " + t
		if where != "" {
			q += " WHERE " + where
		}
		if err := e.db.Exec(q, args...).Error; err != nil {
			return fmt.Errorf("clear %s: %w", t, err)
		}
	}
	return nil
}

// orgNightly runs DailyResults for day and, for each failed experiment,
// logs the error its run returned. With limit > 0 it stops the nightly
// after limit (cut) and counts the experiments whose run completed.
func (e *env) orgNightly(ctx context.Context, c client.Client, queue, day, label string, limit time.Duration) (took time.Duration, runs int, cut bool, err error) {
	if err := e.clear("", nil, runTables...); err != nil {
		return 0, 0, false, err
	}
	start := time.Now()
	id := "scale-daily-" + label
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue},
		workflows.DailyResults, workflows.DailyResultsInput{Day: day})
	if err != nil {
		return 0, 0, false, err
	}
	wait := ctx
	if limit > 0 {
		var cancel context.CancelFunc
		wait, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	var daily workflows.DailyResultsResult
	if err := run.Get(wait, &daily); err != nil {
		if limit == 0 || ctx.Err() != nil || wait.Err() == nil {
			return 0, 0, false, fmt.Errorf("daily results: %w", err)
		}
		took = time.Since(start)
		// The children are abandoned, not terminated with their parent:
		// they stop with the worker (the bench's Temporal server).
		_ = c.TerminateWorkflow(ctx, id, "", "bench: -clickhouse-org-nightly-limit")
		var done int64
		if err := e.db.WithContext(ctx).Raw("SELECT count(*) FROM result_runs WHERE computed_for = ? AND status = ?", day, results.StatusCompleted).Scan(&done).Error; err != nil {
			return took, 0, true, err
		}
		log.Printf("nightly %s (%s): cut after %s with %d runs completed", day, label, took.Round(time.Millisecond), done)
		return took, int(done), true, nil
	}
	took = time.Since(start)
	log.Printf("nightly %s (%s): %+v in %s", day, label, daily, took.Round(time.Millisecond))
	for _, id := range daily.FailedIDs {
		err := c.GetWorkflow(ctx, workflows.ResultsWorkflowID(id, day), "").Get(ctx, nil)
		log.Printf("nightly %s (%s): experiment %s failed: %v", day, label, id, err)
	}
	return took, daily.Completed, false, nil
}

// experimentRun computes the largest experiment (the first) for
// computedFor: yesterday is its nightly run, today a manual one.
func (e *env) experimentRun(ctx context.Context, c client.Client, queue, computedFor string) (time.Duration, int, error) {
	start := time.Now()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.ResultsWorkflowID(e.expIDs[0], computedFor), TaskQueue: queue},
		workflows.ExperimentResults, workflows.ExperimentResultsInput{OrgID: e.orgID, ExperimentID: e.expIDs[0], ComputedFor: computedFor})
	if err != nil {
		return 0, 0, err
	}
	var one workflows.ExperimentResultsResult
	if err := run.Get(ctx, &one); err != nil {
		return 0, 0, err
	}
	return time.Since(start), one.Users, nil
}
