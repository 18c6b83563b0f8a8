package workflows

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
)

const (
	// dailyPageSize experiments are handled per workflow run; the next page
	// continues as new, so history stays small with many experiments.
	dailyPageSize = 200
	// dailyConcurrency bounds children running at once: each one runs a
	// heavy aggregation on the shared database.
	dailyConcurrency = 4
	// maxListedFailures bounds the failed ids carried in the result.
	maxListedFailures = 20
	dayLayout         = "2006-01-02"
)

// DailyResultsInput is empty when the schedule starts it: the day is then
// the UTC day before the scheduled time. Operators may name a Day to
// (re)compute, and a backfill names an org and a last day (LastDay): the
// days from Day to LastDay are computed in turn, for that org only.
// AfterID and Totals carry state across continue-as-new.
type DailyResultsInput struct {
	Day     string
	LastDay string
	OrgID   string
	AfterID string
	Totals  DailyResultsResult
}

// DailyResultsResult counts what happened to each running experiment (over
// every day of a backfill).
type DailyResultsResult struct {
	Day         string
	Days        int // days finished
	Completed   int
	AlreadyDone int // a run of that day exists (completed or running)
	Skipped     int
	Failed      int
	FailedIDs   []string
}

// DailyResults computes a UTC day for every running experiment and every
// holdout, one child workflow each with id results/<experiment>/<day>
// (results/holdout-<holdout>/<day>). A day that
// already completed is refused by Temporal and counted as AlreadyDone; a
// failed one is run again. One failed experiment does not fail the others.
func DailyResults(ctx workflow.Context, in DailyResultsInput) (DailyResultsResult, error) {
	totals := in.Totals
	totals.Day = in.Day
	if totals.Day == "" {
		totals.Day = scheduledTime(ctx).UTC().AddDate(0, 0, -1).Format(dayLayout)
	}
	// The whole nightly's first page merges the ended days first, so its
	// runs read them without FINAL on ClickHouse (runs started before
	// this step: version guard for their histories).
	if in.AfterID == "" && in.OrgID == "" && totals.Days == 0 && workflow.GetVersion(ctx, "compact-ended-days", workflow.DefaultVersion, 1) == 1 {
		compactEndedDays(ctx)
	}
	ctx = workflow.WithActivityOptions(ctx, stepOptions)
	var page activities.ListRunningResult
	if err := workflow.ExecuteActivity(ctx, a.ListRunningExperiments, activities.ListRunningInput{AfterID: in.AfterID, Limit: dailyPageSize, OrgID: in.OrgID}).Get(ctx, &page); err != nil {
		return totals, err
	}
	for start := 0; start < len(page.Experiments); start += dailyConcurrency {
		wave := page.Experiments[start:min(start+dailyConcurrency, len(page.Experiments))]
		runWave(ctx, totals.Day, wave, &totals)
	}
	next := DailyResultsInput{Day: totals.Day, LastDay: in.LastDay, OrgID: in.OrgID, AfterID: page.Next, Totals: totals}
	if page.Next != "" {
		return totals, workflow.NewContinueAsNewError(ctx, DailyResults, next)
	}
	totals.Days++
	if in.LastDay != "" && totals.Day < in.LastDay {
		day, _ := time.Parse(dayLayout, totals.Day)
		next.Day, next.AfterID, next.Totals = day.AddDate(0, 0, 1).Format(dayLayout), "", totals
		return totals, workflow.NewContinueAsNewError(ctx, DailyResults, next)
	}
	return totals, nil
}

// scheduledTime is when the schedule meant to start this run (a late
// catch-up run still computes the day it was scheduled for); the
// workflow's start time otherwise.
func scheduledTime(ctx workflow.Context) time.Time {
	if t, ok := workflow.GetTypedSearchAttributes(ctx).GetTime(scheduledStartKey); ok {
		return t
	}
	return workflow.Now(ctx)
}

// runWave starts one child per experiment and waits for all of them.
func runWave(ctx workflow.Context, day string, wave []activities.ExperimentRef, totals *DailyResultsResult) {
	futures := make([]workflow.ChildWorkflowFuture, len(wave))
	for i, ref := range wave {
		in := ExperimentResultsInput{OrgID: ref.OrgID, ExperimentID: ref.ID, ComputedFor: day, Holdout: ref.Holdout}
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:            in.WorkflowID(),
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
			// A day's run finishes even if this parent is terminated.
			ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
			TypedSearchAttributes: ExperimentSearchAttributes(ref.OrgID, ref.ID),
		})
		// The same id a day run started by the API gets (DayRunOptions).
		futures[i] = workflow.ExecuteChildWorkflow(cctx, ExperimentResults, in)
	}
	for i, f := range futures {
		var res ExperimentResultsResult
		err := f.Get(ctx, &res)
		switch {
		case temporal.IsWorkflowExecutionAlreadyStartedError(err):
			totals.AlreadyDone++
		case err != nil:
			totals.Failed++
			if len(totals.FailedIDs) < maxListedFailures {
				totals.FailedIDs = append(totals.FailedIDs, wave[i].ID)
			}
			workflow.GetLogger(ctx).Error("results run failed", "experiment_id", wave[i].ID, "day", day, "error", err)
		case res.Skipped != "":
			totals.Skipped++
		default:
			totals.Completed++
		}
	}
}

// compactOptions bound the compaction: a day's merge heartbeats when it
// ends, and a failure after a few tries leaves the days to FINAL reads.
var compactOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 2 * time.Hour,
	HeartbeatTimeout:    15 * time.Minute,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: 5 * time.Second, BackoffCoefficient: 2,
		MaximumInterval: time.Minute, MaximumAttempts: 3},
}

// compactEndedDays runs CompactEndedDays; its failure is logged and the
// nightly goes on (the runs read uncompacted days with FINAL, slower but
// the same).
func compactEndedDays(ctx workflow.Context) {
	var out activities.CompactDaysResult
	cctx := workflow.WithActivityOptions(ctx, compactOptions)
	if err := workflow.ExecuteActivity(cctx, a.CompactEndedDays, activities.CompactDaysInput{AsOf: workflow.Now(ctx)}).Get(ctx, &out); err != nil {
		workflow.GetLogger(ctx).Warn("compacting ended days failed; runs read them with FINAL", "error", err)
	}
}
