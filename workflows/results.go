package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
)

// ExperimentResultsInput names the run: an experiment and a computed_for
// value (YYYY-MM-DD for a nightly day, manual-<RFC 3339 instant>).
type ExperimentResultsInput struct {
	OrgID        string
	ExperimentID string
	ComputedFor  string
}

// ExperimentResultsResult summarises a run; the rows are in the database.
type ExperimentResultsResult struct {
	ComputedFor string
	Skipped     string // non-empty: nothing was computed, and why
	Users       int
	Rows        int
	SRMGate     string
}

// Errors that no retry can fix.
var nonRetryable = []string{"BadRunKey", "RunSkipped"}

// Activity options of the run's steps. The analysis is the long one: it
// heartbeats every few seconds, so a lost worker is noticed within a
// minute, and its budget covers a large experiment on a busy database.
var (
	stepOptions = workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: time.Minute, MaximumAttempts: 10, NonRetryableErrorTypes: nonRetryable},
	}
	analyzeOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Minute,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 5 * time.Second, BackoffCoefficient: 2,
			MaximumInterval: 5 * time.Minute, MaximumAttempts: 5, NonRetryableErrorTypes: nonRetryable},
	}
	publishOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: time.Minute, MaximumAttempts: 10},
	}
)

// ExperimentResults computes one run of one experiment: load the plan
// (versions, window, limits), analyse (one SQL aggregation, statistics,
// SRM; staged in the database), publish (Benjamini–Hochberg and the upsert
// of all rows in one transaction). Only ids and small summaries pass
// through its history. A failed run is recorded as failed.
func ExperimentResults(ctx workflow.Context, in ExperimentResultsInput) (ExperimentResultsResult, error) {
	run := activities.RunInput{OrgID: in.OrgID, ExperimentID: in.ExperimentID, ComputedFor: in.ComputedFor,
		WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID}
	out := ExperimentResultsResult{ComputedFor: in.ComputedFor}

	var plan activities.RunPlan
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, stepOptions), a.LoadRunPlan, run).Get(ctx, &plan); err != nil {
		return out, err
	}
	if plan.Skip != "" {
		out.Skipped = plan.Skip
		return out, nil
	}
	var analysis activities.AnalyzeResult
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, analyzeOptions), a.AnalyzeExperiment, run).Get(ctx, &analysis); err != nil {
		return out, markFailed(ctx, run, err)
	}
	out.Users, out.SRMGate = analysis.Users, analysis.SRMGate
	var published activities.PublishResult
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, publishOptions), a.PublishResults, run).Get(ctx, &published); err != nil {
		return out, markFailed(ctx, run, err)
	}
	out.Rows = published.Rows
	return out, nil
}

// markFailed records the failure on the run (even when the workflow was
// cancelled) and returns the original error.
func markFailed(ctx workflow.Context, run activities.RunInput, cause error) error {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	in := activities.MarkRunFailedInput{Run: run, Reason: cause.Error()}
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(dctx, stepOptions), a.MarkRunFailed, in).Get(dctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("could not record the failed run", "error", err)
	}
	return cause
}
