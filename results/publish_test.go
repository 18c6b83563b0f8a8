package results_test

import (
	"context"
	"testing"
	"time"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results"
)

func TestPublishIsIdempotentAndReplacesTheRunsRows(t *testing.T) {
	ctx := context.Background()
	env := testenv.New(t)
	org := env.NewOrg(t)
	key := results.NightlyKey(time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC))
	run := results.Run{ExperimentID: "00000000-0000-0000-0000-000000000001", ComputedFor: key.ComputedFor, OrgID: org.ID, Kind: key.Kind,
		WorkflowID: "wf", ExperimentVersion: 1, WindowStart: key.WindowEnd.AddDate(0, 0, -3), WindowEnd: key.WindowEnd, WindowDays: 3, StartedAt: key.WindowEnd}
	if err := results.StartRun(ctx, env.DB, run); err != nil {
		t.Fatal(err)
	}
	row := func(metric, variant string, p float64) results.Row {
		return results.Row{OrgID: org.ID, Metric: metric, Variant: variant, ControlVariant: "control", MetricVersion: 1, Category: "primary",
			Kind: "mean", Origin: "builtin", Test: "welch_t", PValue: p, Distribution: []byte(`{}`), ComputedAt: key.WindowEnd}
	}
	stageAndPublish := func(rows ...results.Row) int {
		t.Helper()
		if err := results.Stage(ctx, env.DB, run.ExperimentID, key.ComputedFor, results.Analysis{Rows: rows, SRM: results.SRMSummary{Gate: "pass"}}); err != nil {
			t.Fatal(err)
		}
		n, err := results.Publish(ctx, env.DB, run.ExperimentID, key.ComputedFor, key.WindowEnd)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	stageAndPublish(row("a", "t1", 0.01), row("a", "t2", 0.04), row("b", "t1", 0.5))
	if n := stageAndPublish(row("a", "t1", 0.02), row("a", "t2", 0.04)); n != 2 {
		t.Fatalf("second publication wrote %d rows, want 2", n)
	}
	// A retry after the publication committed finds nothing staged.
	n, err := results.Publish(ctx, env.DB, run.ExperimentID, key.ComputedFor, key.WindowEnd)
	if err != nil || n != 2 {
		t.Fatalf("retried publication = %d, %v; want 2 from the completed run", n, err)
	}
	rows, err := results.LoadRows(ctx, env.DB, org.ID, run.ExperimentID, key.ComputedFor)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Variant != "t1" || rows[0].PValue != 0.02 || rows[0].PValueFDR != 0.04 || rows[1].PValueFDR != 0.04 {
		t.Fatalf("rows after republication: %+v", rows)
	}
	days, err := results.AvailableDays(ctx, env.DB, org.ID, run.ExperimentID)
	if err != nil || len(days) != 1 || days[0] != key.ComputedFor {
		t.Fatalf("available days = %v, %v", days, err)
	}
}

// A run whose analysis produced no rows (no metrics, no exposed users yet)
// completes with zero rows instead of failing its publication forever.
func TestPublishCompletesARunWithNothingToPublish(t *testing.T) {
	ctx := context.Background()
	env := testenv.New(t)
	org := env.NewOrg(t)
	key := results.ManualKey(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC))
	run := results.Run{ExperimentID: "00000000-0000-0000-0000-000000000002", ComputedFor: key.ComputedFor, OrgID: org.ID, Kind: key.Kind,
		WorkflowID: "wf", ExperimentVersion: 1, WindowStart: key.WindowEnd.AddDate(0, 0, -1), WindowEnd: key.WindowEnd, WindowDays: 1, StartedAt: key.WindowEnd}
	if err := results.StartRun(ctx, env.DB, run); err != nil {
		t.Fatal(err)
	}
	if err := results.Stage(ctx, env.DB, run.ExperimentID, key.ComputedFor, results.Analysis{SRM: results.SRMSummary{Gate: "insufficient"}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		n, err := results.Publish(ctx, env.DB, run.ExperimentID, key.ComputedFor, key.WindowEnd)
		if err != nil || n != 0 {
			t.Fatalf("publication %d = %d, %v; want 0 rows and no error", i+1, n, err)
		}
	}
	got, err := results.LoadRun(ctx, env.DB, org.ID, run.ExperimentID, key.ComputedFor)
	if err != nil || got.Status != results.StatusCompleted || got.RowCount != 0 {
		t.Fatalf("run after empty publication: %+v, %v", got, err)
	}
	days, err := results.AvailableDays(ctx, env.DB, org.ID, run.ExperimentID)
	if err != nil || len(days) != 0 {
		t.Fatalf("available days = %v, %v; an empty run has no rows to serve", days, err)
	}
}
