package verdict_test

import (
	"encoding/json"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/verdict"
)

// publish stores a completed run with one row per metric of
// resultstest.Config through the pipeline's writers, without a verdict
// (as runs were published before verdicts existed). conversion, the
// primary metric, is clearly better when win is set.
func publish(t *testing.T, db *gorm.DB, orgID, experimentID, computedFor string, win bool) {
	t.Helper()
	ctx := t.Context()
	end := time.Now().UTC().Truncate(time.Second)
	run := results.Run{ExperimentID: experimentID, ComputedFor: computedFor, OrgID: orgID, Kind: results.KindNightly,
		WorkflowID: "results/" + experimentID + "/" + computedFor, Status: results.StatusRunning, ExperimentVersion: 1,
		WindowStart: end.Add(-14 * 24 * time.Hour), WindowEnd: end, WindowDays: 14, StartedAt: end}
	if err := results.StartRun(ctx, db, run); err != nil {
		t.Fatal(err)
	}
	var rows []results.Row
	for _, m := range resultstest.Metrics {
		est, p := 0.001, 0.9
		if win && m == "conversion" {
			est, p = 0.2, 0.0001
		}
		lo, hi := est-0.05, est+0.05
		if p > 0.5 {
			lo, hi = -0.05, 0.05
		}
		rows = append(rows, results.Row{ExperimentID: experimentID, ComputedFor: computedFor, OrgID: orgID, Metric: m, Variant: "treatment",
			ControlVariant: "control", MetricVersion: 1, Category: "secondary", Kind: "mean", Origin: "builtin", Test: "welch_t",
			PValue: p, PValueFDR: p, Effect: est, CILow: lo, CIHigh: hi, RelLift: &est, RelCILow: &lo, RelCIHigh: &hi,
			NControl: 2000, NTreatment: 2000, WindowDays: 14, ComputedAt: end})
	}
	srm := results.SRMSummary{Gate: stats.GatePass, PValue: 0.5, Observed: map[string]int64{"control": 2000, "treatment": 2000}}
	if err := results.Stage(ctx, db, experimentID, computedFor, results.Analysis{Rows: rows, SRM: srm}); err != nil {
		t.Fatal(err)
	}
	if _, err := results.Publish(ctx, db, experimentID, computedFor, end); err != nil {
		t.Fatal(err)
	}
}

func storedVerdict(t *testing.T, db *gorm.DB, orgID, experimentID, computedFor string) (verdict.Verdict, bool) {
	t.Helper()
	run, err := results.LoadRun(t.Context(), db, orgID, experimentID, computedFor)
	if err != nil {
		t.Fatal(err)
	}
	v, ok, err := verdict.Stored(run)
	if err != nil {
		t.Fatal(err)
	}
	return v, ok
}

// The backfill stores a verdict for each published run that has none,
// decided as the results workflow decides it, leaves runs that have one
// (and runs still running) alone, and does nothing the second time.
func TestBackfillStoresVerdictsOfRunsWithoutOne(t *testing.T) {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	exp := resultstest.Experiment(t, db, org.ID, resultstest.Config("backfill"))
	ctx := t.Context()

	publish(t, db, org.ID, exp.ID, "2026-11-20", true)
	publish(t, db, org.ID, exp.ID, "2026-11-21", false)
	// The newer run has its verdict already (a marker the backfill must
	// not overwrite: a stored verdict is never decided again).
	marker := []byte(`{"recommendation":"stop","reasons":[{"code":"marker"}],"days_to_mde":null,"arms":[]}`)
	if err := results.SaveVerdict(ctx, db, exp.ID, "2026-11-21", marker); err != nil {
		t.Fatal(err)
	}
	// A run still computing has no rows to decide from.
	end := time.Now().UTC()
	if err := results.StartRun(ctx, db, results.Run{ExperimentID: exp.ID, ComputedFor: "2026-11-22", OrgID: org.ID, Kind: results.KindNightly,
		Status: results.StatusRunning, ExperimentVersion: 1, WindowStart: end.Add(-time.Hour), WindowEnd: end, StartedAt: end}); err != nil {
		t.Fatal(err)
	}
	if _, ok := storedVerdict(t, db, org.ID, exp.ID, "2026-11-20"); ok {
		t.Fatal("the older run has a verdict before the backfill")
	}

	n, err := verdict.Backfill(ctx, db)
	if err != nil || n != 1 {
		t.Fatalf("backfill decided %d runs (%v), want 1", n, err)
	}
	got, ok := storedVerdict(t, db, org.ID, exp.ID, "2026-11-20")
	if !ok {
		t.Fatal("no verdict stored for the run published before verdicts")
	}
	// What the workflow's step would have stored for the same rows.
	run, _ := results.LoadRun(ctx, db, org.ID, exp.ID, "2026-11-20")
	rows, _ := results.LoadRows(ctx, db, org.ID, exp.ID, "2026-11-20")
	in, err := verdict.Load(ctx, db, run, rows)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(verdict.Decide(in))
	have, _ := json.Marshal(got)
	if string(have) != string(want) {
		t.Fatalf("backfilled verdict\n%s\nwant\n%s", have, want)
	}
	if got.Recommendation != verdict.Ship || got.Variant != "treatment" {
		t.Fatalf("a clear win on the primary metric backfilled as %+v", got)
	}
	if kept, _ := storedVerdict(t, db, org.ID, exp.ID, "2026-11-21"); len(kept.Reasons) != 1 || kept.Reasons[0].Code != "marker" {
		t.Fatalf("the backfill overwrote a stored verdict: %+v", kept)
	}
	if _, ok := storedVerdict(t, db, org.ID, exp.ID, "2026-11-22"); ok {
		t.Fatal("the backfill decided a run that is still running")
	}
	// Reads are stored reads now: OfRun returns what is stored.
	if v, err := verdict.OfRun(run, verdict.Input{}); err != nil || v.Recommendation != verdict.Ship {
		t.Fatalf("OfRun after the backfill: %+v, %v", v, err)
	}

	if n, err := verdict.Backfill(ctx, db); err != nil || n != 0 {
		t.Fatalf("second backfill decided %d runs (%v), want 0", n, err)
	}
}
