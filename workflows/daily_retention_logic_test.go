package workflows_test

import (
	"context"
	"errors"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/workflows"
)

// continuedWith decodes the input a workflow continued as new with.
func continuedWith(t *testing.T, err error, into any) {
	t.Helper()
	var cont *workflow.ContinueAsNewError
	if !errors.As(err, &cont) {
		t.Fatalf("workflow ended with %v, want continue-as-new", err)
	}
	if err := converter.GetDefaultDataConverter().FromPayloads(cont.Input, into); err != nil {
		t.Fatal(err)
	}
}

// One child per running experiment and holdout, with the day's id (a
// holdout's: results/holdout-<id>/<day>, flagged); completed, skipped and
// failed children are counted, one failure does not stop the others, and
// the next page continues as new with the totals so far.
func TestDailyResultsRunsEachExperimentAndPages(t *testing.T) {
	env, acts := newSuiteEnv()
	env.RegisterWorkflow(workflows.ExperimentResults)
	refs := []activities.ExperimentRef{{OrgID: "o1", ID: "e1"}, {OrgID: "o1", ID: "e2"}, {OrgID: "o2", ID: "e3"},
		{OrgID: "o2", ID: "e4"}, {OrgID: "o2", ID: "e5", Holdout: true}, {OrgID: "o3", ID: "e6"}}
	env.OnActivity(acts.ListRunningExperiments, mock.Anything, activities.ListRunningInput{AfterID: "e0", Limit: 200}).
		Return(activities.ListRunningResult{Experiments: refs, Next: "e6"}, nil)
	var started []string
	env.OnWorkflow(workflows.ExperimentResults, mock.Anything, mock.Anything).Return(
		func(ctx workflow.Context, in workflows.ExperimentResultsInput) (workflows.ExperimentResultsResult, error) {
			want := workflows.ResultsWorkflowID(in.ExperimentID, in.ComputedFor)
			if in.ExperimentID == "e5" {
				want = workflows.HoldoutResultsWorkflowID(in.ExperimentID, in.ComputedFor)
			}
			if got := workflow.GetInfo(ctx).WorkflowExecution.ID; got != want || in.Holdout != (in.ExperimentID == "e5") {
				return workflows.ExperimentResultsResult{}, errors.New("child id " + got + ", want " + want)
			}
			started = append(started, in.OrgID+"/"+in.ExperimentID+"/"+in.ComputedFor)
			switch in.ExperimentID {
			case "e2":
				return workflows.ExperimentResultsResult{Skipped: "no exposures"}, nil
			case "e4":
				return workflows.ExperimentResultsResult{}, errors.New("database gone")
			}
			return workflows.ExperimentResultsResult{Rows: 2}, nil
		})
	compacted := false // only the nightly's first page compacts
	env.OnActivity(acts.CompactEndedDays, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.CompactDaysInput) (activities.CompactDaysResult, error) {
			compacted = true
			return activities.CompactDaysResult{}, nil
		})
	prior := workflows.DailyResultsResult{Day: "2026-03-01", Completed: 7}
	env.ExecuteWorkflow(workflows.DailyResults, workflows.DailyResultsInput{Day: "2026-03-01", AfterID: "e0", Totals: prior})

	var next workflows.DailyResultsInput
	continuedWith(t, env.GetWorkflowError(), &next)
	want := workflows.DailyResultsResult{Day: "2026-03-01", Completed: 7 + 4, Skipped: 1, Failed: 1, FailedIDs: []string{"e4"}}
	if next.Day != "2026-03-01" || next.AfterID != "e6" || !equalTotals(next.Totals, want) {
		t.Fatalf("continued with %+v, want after e6 and totals %+v", next, want)
	}
	sort.Strings(started)
	if len(started) != len(refs) || started[0] != "o1/e1/2026-03-01" || started[5] != "o3/e6/2026-03-01" {
		t.Fatalf("children %v", started)
	}
	if compacted {
		t.Fatal("a later page compacted the days again")
	}
}

func equalTotals(a, b workflows.DailyResultsResult) bool {
	if a.Day != b.Day || a.Completed != b.Completed || a.AlreadyDone != b.AlreadyDone || a.Skipped != b.Skipped || a.Failed != b.Failed || len(a.FailedIDs) != len(b.FailedIDs) {
		return false
	}
	for i := range a.FailedIDs {
		if a.FailedIDs[i] != b.FailedIDs[i] {
			return false
		}
	}
	return true
}

// Started without a day (as the schedule starts it), the run first
// compacts the days ended by its start, then computes the UTC day before
// its start, and the last page ends the workflow. A failed compaction
// does not stop the runs (they read with FINAL).
func TestDailyResultsDefaultsToYesterday(t *testing.T) {
	for _, fails := range []bool{false, true} {
		env, acts := newSuiteEnv()
		var order []string
		env.OnActivity(acts.CompactEndedDays, mock.Anything, mock.Anything).Return(
			func(_ context.Context, in activities.CompactDaysInput) (activities.CompactDaysResult, error) {
				order = append(order, "compact "+in.AsOf.UTC().Format(time.RFC3339))
				if fails {
					return activities.CompactDaysResult{}, errors.New("shard down")
				}
				return activities.CompactDaysResult{Merged: 2}, nil
			})
		day := dailyResultsDefaultDay(t, env, acts, &order)
		want := []string{"compact 2026-03-02T00:30:00Z", "run 2026-03-01"}
		if fails {
			want = []string{"compact 2026-03-02T00:30:00Z", "compact 2026-03-02T00:30:00Z", "compact 2026-03-02T00:30:00Z", "run 2026-03-01"}
		}
		if day != "2026-03-01" || !slices.Equal(order, want) {
			t.Fatalf("compaction failing %v: day %q, steps %v; want %v", fails, day, order, want)
		}
	}
}

// dailyResultsDefaultDay runs DailyResults as the schedule starts it at
// 2026-03-02 00:30 UTC over one experiment and returns the day computed,
// appending "run <day>" to order when the child starts.
func dailyResultsDefaultDay(t *testing.T, env *testsuite.TestWorkflowEnvironment, acts *activities.Activities, order *[]string) string {
	t.Helper()
	env.RegisterWorkflow(workflows.ExperimentResults)
	env.SetStartTime(time.Date(2026, 3, 2, 0, 30, 0, 0, time.UTC))
	env.OnActivity(acts.ListRunningExperiments, mock.Anything, mock.Anything).
		Return(activities.ListRunningResult{Experiments: []activities.ExperimentRef{{OrgID: "o", ID: "e"}}}, nil)
	var day string
	env.OnWorkflow(workflows.ExperimentResults, mock.Anything, mock.Anything).Return(
		func(_ workflow.Context, in workflows.ExperimentResultsInput) (workflows.ExperimentResultsResult, error) {
			day = in.ComputedFor
			*order = append(*order, "run "+day)
			return workflows.ExperimentResultsResult{}, nil
		})
	env.ExecuteWorkflow(workflows.DailyResults, workflows.DailyResultsInput{})
	var res workflows.DailyResultsResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Day != day || res.Completed != 1 {
		t.Fatalf("computed %q, result %+v", day, res)
	}
	return day
}

// Retention purges each org of the page with its own retention and one
// cutoff fixed at the start, then continues as new with the same cutoff.
func TestRetentionPurgesEachOrgWithOneCutoff(t *testing.T) {
	env, acts := newSuiteEnv()
	start := time.Date(2026, 3, 2, 1, 30, 0, 0, time.UTC)
	env.SetStartTime(start)
	var dropAsOf time.Time
	env.OnActivity(acts.DropExpiredPartitions, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.DropPartitionsInput) (activities.DropPartitionsResult, error) {
			dropAsOf = in.AsOf
			return activities.DropPartitionsResult{Partitions: 3, EventsDeleted: 500}, nil
		})
	env.OnActivity(acts.ListOrgsForRetention, mock.Anything, activities.ListOrgsInput{Limit: 100}).Return(
		activities.ListOrgsResult{Orgs: []activities.RetentionOrg{{ID: "o1", RetentionDays: 30}, {ID: "o2", RetentionDays: 365}}, Next: "o2"}, nil)
	var purged []activities.PurgeOrgInput
	env.OnActivity(acts.PurgeExpired, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.PurgeOrgInput) (activities.PurgeOrgResult, error) {
			purged = append(purged, in)
			return activities.PurgeOrgResult{EventsDeleted: 1000, RunsDeleted: 2}, nil
		})
	env.ExecuteWorkflow(workflows.Retention, workflows.RetentionInput{})

	var next workflows.RetentionInput
	continuedWith(t, env.GetWorkflowError(), &next)
	if !next.AsOf.Equal(start) || next.AfterID != "o2" || next.Totals != (workflows.RetentionResult{Orgs: 2, PartitionsDropped: 3, EventsDeleted: 2500, RunsDeleted: 4}) {
		t.Fatalf("continued with %+v", next)
	}
	if !dropAsOf.Equal(start) {
		t.Fatalf("partitions dropped as of %s, want the run's cutoff %s", dropAsOf, start)
	}
	if len(purged) != 2 || purged[0].OrgID != "o1" || purged[0].RetentionDays != 30 || purged[1].RetentionDays != 365 ||
		!purged[0].AsOf.Equal(start) || !purged[1].AsOf.Equal(start) || purged[0].BatchSize <= 0 {
		t.Fatalf("purged %+v", purged)
	}
}

// A purge that keeps failing fails the run after its retry budget instead
// of skipping the org silently.
func TestRetentionFailsWhenAPurgeKeepsFailing(t *testing.T) {
	env, acts := newSuiteEnv()
	env.OnActivity(acts.DropExpiredPartitions, mock.Anything, mock.Anything).Return(activities.DropPartitionsResult{}, nil)
	env.OnActivity(acts.ListOrgsForRetention, mock.Anything, mock.Anything).Return(
		activities.ListOrgsResult{Orgs: []activities.RetentionOrg{{ID: "o1", RetentionDays: 30}}}, nil)
	attempts := 0
	env.OnActivity(acts.PurgeExpired, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.PurgeOrgInput) (activities.PurgeOrgResult, error) {
			attempts++
			return activities.PurgeOrgResult{}, errors.New("lock timeout")
		})
	env.ExecuteWorkflow(workflows.Retention, workflows.RetentionInput{AsOf: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)})
	if env.GetWorkflowError() == nil {
		t.Fatal("retention succeeded with a purge that always fails")
	}
	if attempts < 2 {
		t.Fatalf("purge attempted %d times, want retries", attempts)
	}
}
