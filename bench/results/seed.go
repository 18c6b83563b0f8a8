package main

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/models"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/results"
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

// openSchema opens a fresh schema of the database and returns its name and
// a function that drops it (unless keep).
func openSchema(base string, keep bool) (*gorm.DB, string, func(), error) {
	dsn, drop, err := models.NewSchema(base, "bench_")
	if err != nil {
		return nil, "", nil, err
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, "", nil, err
	}
	db, err := models.Open(dsn, "")
	if err != nil {
		return nil, "", nil, err
	}
	if _, err := models.Migrate(db); err != nil {
		return nil, "", nil, err
	}
	cleanup := func() {
		if !keep {
			_ = drop()
		}
	}
	return db, u.Query().Get("search_path"), cleanup, nil
}

func metric(name, kind, category, method string, src experiments.MetricSource) experiments.Metric {
	shared := false
	return experiments.Metric{Name: name, Kind: kind, Category: category, MethodDefault: method, MetricVersion: 1, SharedOrgWide: &shared, Source: &src}
}

// benchMetrics are the 6 metrics of the benchmark: four built-ins and two
// business metrics on the one "purchase" event. CUPED is on (the default)
// for the five welch_t / z_test metrics, and latency_p95_ms is the true
// per-call p95 (a quantile metric).
func benchMetrics() []experiments.Metric {
	shared := false
	builtin := func(name, kind, method string) experiments.Metric {
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
	if err := db.Model(&models.Org{}).Where("id = ?", org.ID).Update("plan", "enterprise").Error; err != nil {
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
	for _, table := range []string{"experiments", "experiment_versions"} {
		col := map[string]string{"experiments": "id", "experiment_versions": "experiment_id"}[table]
		if err := db.Exec("UPDATE "+table+" SET created_at = ? WHERE "+col+" = ?", began, exp.ID).Error; err != nil {
			return fixture{}, err
		}
	}
	// The partitions the maintenance workflow would have created as the
	// days came (PostgreSQL), so the rows do not pile up in the default.
	if _, err := ingest.EnsurePartitions(ctx, db, began, time.Now()); err != nil {
		return fixture{}, err
	}
	err = db.WithContext(ctx).Exec(`INSERT INTO events (org_id, event_id, type, experiment_id, user_id, variant, ts, received_at,
  latency_ms, total_tokens, cost_usd, error, business_metric, value, source)
SELECT ?, 'e' || u || '-' || k,
  CASE WHEN k = 0 THEN 'exposure' WHEN k < ? - 1 THEN 'model_call' ELSE 'business_event' END,
  ?, 'u' || u, CASE WHEN u % 2 = 0 THEN 'control' ELSE 'treatment' END,
  ts, ts,
  CASE WHEN k BETWEEN 1 AND ? - 2 THEN 200 + (u % 2) * 5 + random() * 100 END,
  CASE WHEN k BETWEEN 1 AND ? - 2 THEN 500 + floor(random() * 200)::bigint END,
  CASE WHEN k BETWEEN 1 AND ? - 2 THEN random() * 0.01 END,
  CASE WHEN k BETWEEN 1 AND ? - 2 AND random() < 0.02 THEN 'timeout' END,
  CASE WHEN k = ? - 1 THEN CASE WHEN random() < 0.20 + (u % 2) * 0.02 THEN 'purchase' ELSE 'visit' END END,
  CASE WHEN k = ? - 1 THEN random() * 50 END,
  'bench'
FROM generate_series(0, ? - 1) AS u, generate_series(0, ? - 1) AS k,
  LATERAL (SELECT ?::timestamptz + (u % ?) * interval '1 day' + (u % 1000) * interval '1 second' + k * interval '1 minute'
    - CASE WHEN k = 1 THEN interval '3 days' ELSE interval '0 days' END AS ts) t`,
		org.ID, perUser, exp.ID, perUser, perUser, perUser, perUser, perUser, perUser, users, perUser,
		began.Add(time.Hour), windowDays).Error
	if err != nil {
		return fixture{}, fmt.Errorf("generate events: %w", err)
	}
	// VACUUM sets the hint bits and visibility map that the first scan
	// after a bulk load would otherwise write, so neither timed query pays
	// for the load.
	if err := db.Exec("VACUUM ANALYZE events").Error; err != nil {
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
	return models.Open(u.String(), "")
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
