// Command rollups times the nightly aggregation of a 90-day-old experiment
// read in full from events against the same run read from day rollups plus
// the one day that just ended (docs/results.md, "Incremental results"), in
// one schema of its own, and reports the ratio.
//
//	DATABASE_URL=postgres://... go run ./bench/rollups -users 200000
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/bench/benchseed"
	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/database"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/results"
	"github.com/expd/expd/vocab"
)

// ageDays is the experiment's age at the nightly run.
const ageDays = 90

func main() {
	users := flag.Int("users", 200_000, "users in the experiment, exposed evenly over the 90 days")
	perUser := flag.Int("per-user", 10, "events per user: 1 exposure, then model calls and one business event 13 h apart")
	spacing := flag.Duration("spacing", 13*time.Hour, "time between a user's events (13h: about 2 events per user and day)")
	quantile := flag.Bool("quantile", false, "add latency_p95_ms (a quantile metric: read from events on both paths)")
	noCUPED := flag.Bool("no-cuped", false, "turn CUPED off (its pre-period reads events on both paths)")
	keep := flag.Bool("keep", false, "keep the benchmark schema")
	flag.Parse()
	if err := run(*users, *perUser, *spacing, *quantile, *noCUPED, *keep); err != nil {
		log.Fatal(err)
	}
}

func run(users, perUser int, spacing time.Duration, quantile, noCUPED, keep bool) error {
	ctx := context.Background()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		return fmt.Errorf("set DATABASE_URL to a PostgreSQL database")
	}
	dsn, drop, err := database.NewSchema(base, "bench_")
	if err != nil {
		return err
	}
	if !keep {
		defer func() { _ = drop() }()
	}
	db, err := database.Open(dsn, "")
	if err != nil {
		return err
	}
	if _, err := database.Migrate(db); err != nil {
		return err
	}
	// Both ways are timed whatever the density rule would pick (printed).
	results.RollupMaxRowsPerEvent = math.Inf(1)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	began := today.AddDate(0, 0, -ageDays).Add(10 * time.Hour)
	t0 := time.Now()
	orgID, expID, err := seed(ctx, db, began, users, perUser, spacing, quantile, noCUPED)
	if err != nil {
		return err
	}
	log.Printf("seeded %d users, %d events over %d days in %s", users, users*perUser, ageDays, time.Since(t0).Round(time.Second))

	// The nightly run of yesterday, at 00:30 today.
	key := results.NightlyKey(today.AddDate(0, 0, -1))
	now := today.Add(30 * time.Minute)
	p, err := results.LoadDesign(ctx, db, orgID, expID, key.WindowEnd)
	if err != nil {
		return err
	}
	d := p.Design
	// Earlier nights rolled up every day before yesterday: the run of the
	// day before, at its own 00:30 (not timed against the full read, but
	// reported: it is what the first night after deploying costs).
	t0 = time.Now()
	before := results.NightlyKey(today.AddDate(0, 0, -2))
	pb, err := results.LoadDesign(ctx, db, orgID, expID, before.WindowEnd)
	if err != nil {
		return err
	}
	if _, use, err := results.AggregateIncremental(ctx, db, orgID, expID, pb.Design.Window, pb.Design.Arms(), pb.Design.Metrics, now.AddDate(0, 0, -1), nil); err != nil || use.Rolled != ageDays-1 {
		return fmt.Errorf("roll up the earlier days: %+v %v", use, err)
	}
	firstNight := time.Since(t0)
	if err := db.Exec("VACUUM ANALYZE result_rollups").Error; err != nil {
		return err
	}
	var density struct{ Rows, Events int64 }
	if err := db.Table("result_rollup_days").Select("SUM(rollup_rows) AS rows, SUM(event_count) AS events").Scan(&density).Error; err != nil {
		return err
	}
	rollupRows := density.Rows

	// Each way twice, alternating, the faster kept; the incremental run
	// rolls yesterday up each time (its rollup is deleted in between).
	var full, inc time.Duration
	var fullUsers, incUsers int
	for round := range 2 {
		t := time.Now()
		s, err := results.Aggregate(ctx, db, orgID, expID, d.Window, d.Arms(), d.Metrics, nil)
		if err != nil {
			return err
		}
		if el := time.Since(t); round == 0 || el < full {
			full = el
		}
		fullUsers = countUsers(s)
		if err := db.Exec("DELETE FROM result_rollup_days WHERE day = ?", key.ComputedFor).Error; err != nil {
			return err
		}
		t = time.Now()
		s, use, err := results.AggregateIncremental(ctx, db, orgID, expID, d.Window, d.Arms(), d.Metrics, now, nil)
		if err != nil {
			return err
		}
		if use.Rolled != 1 || use.Reused != ageDays-1 {
			return fmt.Errorf("incremental run did not read rollups: %+v", use)
		}
		if el := time.Since(t); round == 0 || el < inc {
			inc = el
		}
		incUsers = countUsers(s)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("users=%d events=%d (%s apart) days=%d metrics=%d (%s) CUPED=%t rollup rows=%d\n", users, users*perUser, spacing, ageDays, len(d.Metrics), metricNames(d.Metrics), !noCUPED, rollupRows)
	fmt.Printf("nightly run, full read of the window:        %s (%d users)\n", full.Round(time.Millisecond), fullUsers)
	fmt.Printf("nightly run, rollups + yesterday's events:   %s (%d users)\n", inc.Round(time.Millisecond), incUsers)
	fmt.Printf("ratio full / incremental:                    %.2f\n", full.Seconds()/inc.Seconds())
	fmt.Printf("rollup rows per event: %.2f (a run reads rollups up to 1)\n", float64(density.Rows)/float64(density.Events))
	fmt.Printf("first night (rolling up %d days at once):    %s\n", ageDays-1, firstNight.Round(time.Millisecond))
	fmt.Printf("load average: %s", load)
	return nil
}

func countUsers(s results.Sample) int {
	n := 0
	for _, a := range s.Arms {
		n += len(a.UserIDs)
	}
	return n
}

func metricNames(ms []metrics.Resolved) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return strings.Join(out, ", ")
}

// seed creates an enterprise org and an experiment started ageDays ago,
// and generates its events: user u is exposed on day u % ageDays, then
// makes model calls `spacing` apart, the last event
// a business event (a purchase for about 20% of control, 22% of
// treatment). CUPED (on for the welch_t and z_test metrics) reads the
// pre-period on both paths.
func seed(ctx context.Context, db *gorm.DB, began time.Time, users, perUser int, spacing time.Duration, quantile, noCUPED bool) (string, string, error) {
	org, err := orgs.Ensure(ctx, db, "org_bench_rollups", "bench-rollups")
	if err != nil {
		return "", "", err
	}
	if err := db.Model(&orgs.Org{}).Where("id = ?", org.ID).Update("plan", "enterprise").Error; err != nil {
		return "", "", err
	}
	shared := false
	builtin := func(name string, kind vocab.Kind, method string) experiments.Metric {
		return experiments.Metric{Name: name, Kind: kind, Category: "guardrail", MethodDefault: method, MetricVersion: 1, SharedOrgWide: &shared}
	}
	purchase := &experiments.MetricSource{EventType: "business_event", BusinessMetric: "purchase"}
	ms := []experiments.Metric{
		builtin("latency_ms", "mean", "welch_t"),
		builtin("error_rate", "mean", "welch_t"),
		builtin("total_tokens", "mean", "welch_t"),
		builtin("cost_per_call_usd", "ratio", ""),
		{Name: "conversion", Kind: "proportion", Category: "primary", MethodDefault: "z_test", MetricVersion: 1, SharedOrgWide: &shared, Source: purchase},
		{Name: "revenue", Kind: "sum", Category: "secondary", MethodDefault: "welch_t", MetricVersion: 1, SharedOrgWide: &shared, Source: purchase},
	}
	if quantile {
		ms = append(ms, builtin("latency_p95_ms", "quantile", ""))
	}
	if noCUPED {
		off := false
		for i := range ms {
			ms[i].CUPED = &off
		}
	}
	cfg := experiments.Config{Name: "bench", Salt: "bench-salt", BucketCount: 10000,
		Allocation: []bucketing.Slice{{Variant: "control", Weight: 50}, {Variant: "treatment", Weight: 50}}, Metrics: ms}
	exp, err := experiments.Store{DB: db}.Create(ctx, org.ID, "bench", cfg)
	if err != nil {
		return "", "", err
	}
	if err := benchseed.Backdate(ctx, db, exp.ID, began); err != nil {
		return "", "", err
	}
	err = benchseed.Generate(ctx, db, benchseed.Events{OrgID: org.ID, ExperimentID: exp.ID, Users: users, PerUser: perUser,
		First: began.Add(time.Hour), Days: ageDays, Spacing: spacing})
	if err != nil {
		return "", "", err
	}
	return org.ID, exp.ID, nil
}
