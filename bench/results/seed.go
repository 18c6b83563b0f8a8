package main

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/bench/benchseed"
	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/database"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/results"
	"github.com/expd/expd/vocab"
)

// windowDays is how far back the events go.
const windowDays = 14

type fixture struct {
	orgID, expID string
	window       results.Window
	cfgMetrics   []experiments.Metric
	seedTime     time.Duration
	schema       string
}

func metric(name string, kind vocab.Kind, category, method string, src experiments.MetricSource) experiments.Metric {
	shared := false
	return experiments.Metric{Name: name, Kind: kind, Category: category, MethodDefault: method, MetricVersion: 1, SharedOrgWide: &shared, Source: &src}
}

// benchMetrics are the 6 metrics of the benchmark: four built-ins and two
// business metrics on the one "purchase" event. CUPED is on (the default)
// for the five welch_t / z_test metrics, and latency_p95_ms is the true
// per-call p95 (a quantile metric).
func benchMetrics() []experiments.Metric {
	shared := false
	builtin := func(name string, kind vocab.Kind, method string) experiments.Metric {
		return experiments.Metric{Name: name, Kind: kind, Category: "guardrail", MethodDefault: method, MetricVersion: 1, SharedOrgWide: &shared}
	}
	purchase := experiments.MetricSource{EventType: "business_event", BusinessMetric: "purchase"}
	return []experiments.Metric{
		builtin("latency_ms", "mean", "welch_t"),
		builtin("latency_p95_ms", "quantile", ""),
		builtin("error_rate", "mean", "welch_t"),
		builtin("total_tokens", "mean", "welch_t"),
		metric("conversion", "proportion", "primary", "z_test", purchase),
		metric("revenue", "sum", "secondary", "welch_t", purchase),
	}
}

// seed creates an enterprise org (no sample cap at this size) and one
// experiment started 15 days ago, then generates the events in the
// database: per user an exposure, model calls a minute apart, and one
// business event (a purchase for about 20% of control, 22% of treatment).
// The first model call falls 3 days before the exposure: the pre-period
// CUPED reads.
func seed(ctx context.Context, db *gorm.DB, users, perUser int) (fixture, error) {
	start := time.Now()
	org, err := orgs.Ensure(ctx, db, "org_bench", "bench")
	if err != nil {
		return fixture{}, err
	}
	if err := db.Model(&orgs.Org{}).Where("id = ?", org.ID).Update("plan", "enterprise").Error; err != nil {
		return fixture{}, err
	}
	cfg := experiments.Config{Name: "bench", Salt: "bench-salt", BucketCount: 10000,
		Allocation: []bucketing.Slice{{Variant: "control", Weight: 50}, {Variant: "treatment", Weight: 50}},
		Metrics:    benchMetrics()}
	exp, err := experiments.Store{DB: db}.Create(ctx, org.ID, "bench", cfg)
	if err != nil {
		return fixture{}, err
	}
	began := time.Now().UTC().AddDate(0, 0, -windowDays-1)
	if err := benchseed.Backdate(ctx, db, exp.ID, began); err != nil {
		return fixture{}, err
	}
	err = benchseed.Generate(ctx, db, benchseed.Events{OrgID: org.ID, ExperimentID: exp.ID, Users: users, PerUser: perUser,
		First: began.Add(time.Hour), Days: windowDays, Spacing: time.Minute, PreShift: 3 * 24 * time.Hour})
	if err != nil {
		return fixture{}, err
	}
	key := results.ManualKey(time.Now())
	return fixture{orgID: org.ID, expID: exp.ID, cfgMetrics: cfg.Metrics, seedTime: time.Since(start),
		window: results.NewWindow(began, key.WindowEnd, 730)}, nil
}

// reopenSchema opens a schema kept by an earlier -keep run.
func reopenSchema(base, schema string) (*gorm.DB, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := database.Open(u.String(), "")
	if err != nil {
		return nil, err
	}
	// Migrations newer than the kept schema.
	_, err = database.Migrate(db)
	return db, err
}

// loaded is the fixture of a kept schema: its one experiment, started
// when seed created it.
func loaded(ctx context.Context, db *gorm.DB, schema string) (fixture, error) {
	var e struct {
		ID, OrgID string
		CreatedAt time.Time
	}
	if err := db.WithContext(ctx).Raw("SELECT id, org_id, created_at FROM experiments WHERE name = 'bench'").Scan(&e).Error; err != nil {
		return fixture{}, err
	}
	if e.ID == "" {
		return fixture{}, fmt.Errorf("no bench experiment in this schema")
	}
	key := results.ManualKey(time.Now())
	return fixture{orgID: e.OrgID, expID: e.ID, cfgMetrics: benchMetrics(), schema: schema,
		window: results.NewWindow(e.CreatedAt, key.WindowEnd, 730)}, nil
}
