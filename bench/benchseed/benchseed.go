// Package benchseed gives the benchmarks (bench/results, bench/rollups,
// bench/calls) one way to open a schema, backdate an experiment and
// generate its events inside PostgreSQL, so all time the same data shape.
package benchseed

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/database"
	"github.com/expd/expd/ingest"
)

// OpenSchema opens a fresh, migrated schema of the database base names
// and returns its name and a function that drops it (unless keep).
func OpenSchema(base string, keep bool) (*gorm.DB, string, func(), error) {
	dsn, drop, err := database.NewSchema(base, "bench_")
	if err != nil {
		return nil, "", nil, err
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, "", nil, err
	}
	db, err := database.Open(dsn, "")
	if err != nil {
		return nil, "", nil, err
	}
	if _, err := database.Migrate(db); err != nil {
		return nil, "", nil, err
	}
	cleanup := func() {
		if !keep {
			_ = drop()
		}
	}
	return db, u.Query().Get("search_path"), cleanup, nil
}

// Backdate makes an experiment (and its versions) look created at began,
// and creates the day partitions the maintenance workflow would have made
// as those days came, so the generated rows do not pile up in the default.
func Backdate(ctx context.Context, db *gorm.DB, experimentID string, began time.Time) error {
	for table, col := range map[string]string{"experiments": "id", "experiment_versions": "experiment_id"} {
		if err := db.WithContext(ctx).Exec("UPDATE "+table+" SET created_at = ? WHERE "+col+" = ?", began, experimentID).Error; err != nil {
			return fmt.Errorf("backdate %s: %w", table, err)
		}
	}
	if _, err := ingest.EnsurePartitions(ctx, db, began.AddDate(0, 0, -1), time.Now().AddDate(0, 0, 10)); err != nil {
		return fmt.Errorf("partitions from %s: %w", began.Format(time.DateOnly), err)
	}
	return nil
}

// Events says what Generate writes: user u (0 to Users-1, variant by
// parity) is exposed at First + (u % Days) days + (u % 1000) s, then makes
// PerUser-2 model calls Spacing apart and one business event (a purchase
// for about 20% of control, 22% of treatment). PreShift moves each user's
// first model call that long before the exposure, where CUPED's pre-period
// reads it (0: no pre-period data).
type Events struct {
	OrgID, ExperimentID string
	Users, PerUser      int
	First               time.Time
	Days                int
	Spacing, PreShift   time.Duration
}

// Generate inserts the events in one statement and VACUUM ANALYZEs the
// table, so no timed query pays for setting hint bits after the load.
func Generate(ctx context.Context, db *gorm.DB, e Events) error {
	err := db.WithContext(ctx).Exec(`INSERT INTO events (org_id, event_id, type, experiment_id, user_id, variant, ts, received_at,
  latency_ms, total_tokens, cost_usd, error, business_metric, value, source)
SELECT @org, 'e' || u || '-' || k,
  CASE WHEN k = 0 THEN 'exposure' WHEN k < @per - 1 THEN 'model_call' ELSE 'business_event' END,
  @exp, 'u' || u, CASE WHEN u % 2 = 0 THEN 'control' ELSE 'treatment' END,
  ts, ts,
  CASE WHEN k BETWEEN 1 AND @per - 2 THEN 200 + (u % 2) * 5 + random() * 100 END,
  CASE WHEN k BETWEEN 1 AND @per - 2 THEN 500 + floor(random() * 200)::bigint END,
  CASE WHEN k BETWEEN 1 AND @per - 2 THEN random() * 0.01 END,
  CASE WHEN k BETWEEN 1 AND @per - 2 AND random() < 0.02 THEN 'timeout' END,
  CASE WHEN k = @per - 1 THEN CASE WHEN random() < 0.20 + (u % 2) * 0.02 THEN 'purchase' ELSE 'visit' END END,
  CASE WHEN k = @per - 1 THEN random() * 50 END,
  'bench'
FROM generate_series(0, @users - 1) AS u, generate_series(0, @per - 1) AS k,
  LATERAL (SELECT CAST(@first AS timestamptz) + (u % @days) * interval '1 day' + (u % 1000) * interval '1 second'
    + k * @spacing * interval '1 second'
    - CASE WHEN k = 1 THEN @pre * interval '1 second' ELSE interval '0 seconds' END AS ts) t`,
		map[string]any{"org": e.OrgID, "exp": e.ExperimentID, "per": e.PerUser, "users": e.Users, "first": e.First,
			"days": e.Days, "spacing": int64(e.Spacing.Seconds()), "pre": int64(e.PreShift.Seconds())}).Error
	if err != nil {
		return fmt.Errorf("generate events: %w", err)
	}
	if err := db.WithContext(ctx).Exec("VACUUM ANALYZE events").Error; err != nil {
		return fmt.Errorf("vacuum events: %w", err)
	}
	return nil
}
