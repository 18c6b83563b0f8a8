package activities_test

import (
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"
	"gorm.io/gorm"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/database"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/results"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/vocab"
)

// olderThan counts, per table, the org's rows of per-user data dated
// before cutoff: every table with a user_id column and a timestamp, the
// scores and evaluations (keyed by call), and the rollups whose CUPED
// pre-period sums reach before the cutoff (a rollup of day D sums the
// PrePeriodDays before D). keep lists experiments whose pins may stay.
func olderThan(t *testing.T, db *gorm.DB, orgID string, cutoff time.Time, keep []string) map[string]int64 {
	t.Helper()
	day := cutoff.Format(time.DateOnly)
	preDay := cutoff.AddDate(0, 0, results.PrePeriodDays).Format(time.DateOnly)
	checks := map[string]struct {
		q    string
		args []any
	}{
		"events":         {`SELECT count(*) FROM events WHERE org_id = ? AND ts < ?`, []any{orgID, cutoff}},
		"assignments":    {`SELECT count(*) FROM assignments WHERE org_id = ? AND created_at < ? AND experiment_id NOT IN ?`, []any{orgID, cutoff, keep}},
		"result_rollups": {`SELECT count(*) FROM result_rollups WHERE org_id = ? AND (day < ? OR first_ts < ? OR n_pre > 0 AND day < ?)`, []any{orgID, day, cutoff, preDay}},
		"scores":         {`SELECT count(*) FROM scores WHERE org_id = ? AND ts < ?`, []any{orgID, cutoff}},
		"evaluations":    {`SELECT count(*) FROM evaluations WHERE org_id = ? AND evaluated_at < ?`, []any{orgID, cutoff}},
	}
	// Every table with a user column is checked: a new one fails here
	// until retention (and this test) covers it.
	var tables []string
	var err error
	if database.IsPostgres(db) {
		err = db.Raw(`SELECT c.relname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE a.attname = 'user_id' AND n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition`).Scan(&tables).Error
	} else {
		err = db.Raw(`SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' AND p.name = 'user_id'`).Scan(&tables).Error
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		// memberships.user_id is a member of the org's staff (users), not
		// an end user of the customer's application.
		if _, ok := checks[table]; !ok && table != "memberships" {
			t.Errorf("table %s has a user_id column that retention does not cover", table)
		}
	}
	out := map[string]int64{}
	for table, c := range checks {
		var n int64
		if err := db.Raw(c.q, c.args...).Scan(&n).Error; err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		out[table] = n
	}
	return out
}

// Retention leaves no per-user data older than the cutoff: 40 days of
// traffic in two experiments (one running, one stopped) with pins, judge
// scores of every call and rollups with CUPED pre-period sums; after the
// purge at 30 days no table holds a row of an end user dated before the
// cutoff (the running experiment's pins excepted: they keep its users'
// variants), the rows after it are kept, and the next run still computes.
func TestRetentionLeavesNoPerUserDataOlderThanTheCutoff(t *testing.T) {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	now := time.Now().UTC()
	writer := ingest.NewWriter(db, ingest.Options{Now: func() time.Time { return now }})
	tenant := ingest.Tenant{OrgID: org.ID, Plan: plans.Enterprise}
	users := resultstest.Users(5, 40)
	var exps []string
	for i := range 2 {
		exp := resultstest.Experiment(t, db, org.ID, resultstest.Config(fmt.Sprintf("retention-%d", i)))
		resultstest.Backdate(t, db, exp.ID, 41*24*time.Hour)
		exps = append(exps, exp.ID)
		for d := 40; d >= 1; d -= 3 {
			day := now.AddDate(0, 0, -d).Truncate(24 * time.Hour).Add(9 * time.Hour)
			rows := resultstest.Events(org.ID, exp.ID, users, day)
			var sc []scores.Row
			for k := range rows {
				rows[k].EventID = fmt.Sprintf("d%d-%s", d, rows[k].EventID)
				if rows[k].Type == vocab.TypeModelCall {
					sc = append(sc, scores.Row{OrgID: org.ID, CallID: rows[k].EventID, Name: "helpfulness", Source: "judge", Value: 0.5, Ts: rows[k].Ts})
				}
			}
			if _, err := writer.Write(t.Context(), ingest.Batch{Tenant: tenant, Rows: rows, Scores: sc}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The pins were recorded at the first exposures, 40 days ago.
	if err := db.Exec(`UPDATE assignments SET created_at = ? WHERE org_id = ?`, now.AddDate(0, 0, -40), org.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Model(&experiments.Row{}).Where("id = ?", exps[1]).Update("status", experiments.StatusStopped).Error; err != nil {
		t.Fatal(err)
	}
	if database.IsPostgres(db) {
		if err := db.Exec("ANALYZE").Error; err != nil {
			t.Fatal(err)
		}
	}
	key := results.NightlyKey(now.AddDate(0, 0, -1))
	runOf := func(expID string) results.Sample {
		p, err := results.LoadDesign(t.Context(), db, org.ID, expID, key.WindowEnd)
		if err != nil || p.Skip != "" {
			t.Fatalf("design: %v %s", err, p.Skip)
		}
		d := p.Design
		s, _, err := results.AggregateIncremental(t.Context(), db, org.ID, expID, d.Window, d.Arms(), d.Metrics, now, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	runOf(exps[0]) // rolls the days up, with their pre-period sums

	cutoff := now.AddDate(0, 0, -30)
	before := olderThan(t, db, org.ID, cutoff, exps[:1])
	for _, table := range []string{"events", "assignments", "result_rollups", "scores"} {
		if before[table] == 0 {
			t.Fatalf("seed: no %s older than the cutoff (%v); the test would prove nothing", table, before)
		}
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	acts := &activities.Activities{DB: db}
	env.RegisterActivity(acts)
	val, err := env.ExecuteActivity(acts.PurgeExpired, activities.PurgeOrgInput{OrgID: org.ID, RetentionDays: 30, AsOf: now, BatchSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out activities.PurgeOrgResult
	if err := val.Get(&out); err != nil {
		t.Fatal(err)
	}
	after := olderThan(t, db, org.ID, cutoff, exps[:1])
	for table, n := range after {
		if n != 0 {
			t.Errorf("after retention %s holds %d rows of users older than the cutoff (before: %d)", table, n, before[table])
		}
	}
	if out.EventsDeleted != before["events"] || out.ScoresDeleted != before["scores"] || out.PinsDeleted != before["assignments"] {
		t.Errorf("purge counts %+v, before %v", out, before)
	}
	var kept int64
	db.Model(&ingest.EventRow{}).Where("org_id = ? AND ts >= ?", org.ID, cutoff).Count(&kept)
	if kept == 0 {
		t.Error("retention deleted the events after the cutoff")
	}
	if s := runOf(exps[0]); len(s.Arms["control"].UserIDs) == 0 {
		t.Error("the run after retention has no users")
	}
}
