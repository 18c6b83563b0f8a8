package activities_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/results"
	"github.com/expd/expd/results/resultstest"
)

// runSteps runs a results run's activities in order, as the workflow does.
func runSteps(t *testing.T, acts *activities.Activities, in activities.RunInput) activities.RunPlan {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(acts)
	var plan activities.RunPlan
	val, err := env.ExecuteActivity(acts.LoadRunPlan, in)
	if err != nil {
		t.Fatalf("load run plan: %v", err)
	}
	if err := val.Get(&plan); err != nil {
		t.Fatal(err)
	}
	if _, err := env.ExecuteActivity(acts.AnalyzeExperiment, in); err != nil {
		t.Fatalf("analyze: %v", err)
	}
	if _, err := env.ExecuteActivity(acts.PublishResults, in); err != nil {
		t.Fatalf("publish: %v", err)
	}
	return plan
}

func TestFreePlanLimitsShapeTheRun(t *testing.T) {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	free := plans.Get(plans.Free)
	cfg := resultstest.Config("limits")
	cfg.Metrics[0].MethodDefault = "permutation"
	exp := resultstest.Experiment(t, db, org.ID, cfg)
	resultstest.Backdate(t, db, exp.ID, 40*24*time.Hour) // older than free's 30-day retention
	perArm := free.MaxSamplePerArm + 50
	resultstest.Insert(t, db, resultstest.Events(org.ID, exp.ID, resultstest.Users(perArm, 5), time.Now().UTC().Add(-time.Hour)))

	key := results.ManualKey(time.Now())
	in := activities.RunInput{OrgID: org.ID, ExperimentID: exp.ID, ComputedFor: key.ComputedFor, WorkflowID: "test"}
	plan := runSteps(t, &activities.Activities{DB: db}, in)
	if plan.Plan != string(plans.Free) || plan.Window.Days != free.RetentionDays || !plan.Window.RetentionTruncated {
		t.Fatalf("plan %+v, want free with a window cut to %d days", plan, free.RetentionDays)
	}
	rows, err := results.LoadRows(context.Background(), db, org.ID, exp.ID, key.ComputedFor)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(cfg.Metrics) {
		t.Fatalf("%d rows, want %d", len(rows), len(cfg.Metrics))
	}
	for _, r := range rows {
		if !r.SampleCapUsed || r.WindowDays != free.RetentionDays || !r.RetentionTruncated {
			t.Errorf("%s: cap %v, window %d, truncated %v", r.Metric, r.SampleCapUsed, r.WindowDays, r.RetentionTruncated)
		}
		if r.Metric != "latency_ms" && r.NControl != int64(free.MaxSamplePerArm) {
			t.Errorf("%s: n control %d, want the cap %d", r.Metric, r.NControl, free.MaxSamplePerArm)
		}
		wantDraws := 0
		if r.Test == "permutation" {
			wantDraws = free.MaxPermutations
		}
		if r.PermutationsUsed != wantDraws {
			t.Errorf("%s (%s): permutations_used %d, want %d", r.Metric, r.Test, r.PermutationsUsed, wantDraws)
		}
	}
}
