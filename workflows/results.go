package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/audit"
	"github.com/expd/expd/guardrails"
	"github.com/expd/expd/results"
	"github.com/expd/expd/webhooks"
)

// ExperimentResultsInput names the run: an experiment and a computed_for
// value (YYYY-MM-DD for a nightly day, manual-<RFC 3339 instant>).
type ExperimentResultsInput struct {
	OrgID        string
	ExperimentID string
	ComputedFor  string
	// Holdout: ExperimentID names a holdout; its run is the same steps
	// over its two sides, and ends once published (no guardrails, verdict
	// or webhook: nothing ships from it). docs/targeting.md.
	Holdout bool `json:",omitempty"`
}

// WorkflowID is the run's one workflow id: ResultsWorkflowID, or
// HoldoutResultsWorkflowID for a holdout.
func (in ExperimentResultsInput) WorkflowID() string {
	if in.Holdout {
		return HoldoutResultsWorkflowID(in.ExperimentID, in.ComputedFor)
	}
	return ResultsWorkflowID(in.ExperimentID, in.ComputedFor)
}

// ExperimentResultsResult summarises a run; the rows are in the database.
type ExperimentResultsResult struct {
	ComputedFor string
	Skipped     string // non-empty: nothing was computed, and why
	Users       int
	Rows        int
	SRMGate     string
	Breaches    int  // guardrail breaches this run acted on
	Stopped     bool // a guardrail breach stopped the experiment
	// Recommendation is the run's verdict: ship, keep_running or stop.
	Recommendation string
}

// Errors that no retry can fix.
var nonRetryable = []string{"BadRunKey", "RunSkipped"}

// Activity options of the run's steps, sized to what each step does and
// to one goal: a run whose worker dies recovers within 20 seconds of a
// replacement worker starting (docs/results.md, "Recovery after a crash").
//
//   - Steps (LoadRunPlan, MarkRunFailed, ListRunningExperiments, the
//     retention listing) are a handful of indexed queries that take
//     milliseconds; 15 s is ample even on a busy database and is how long
//     a step lost with its worker waits before it is retried.
//   - The analysis (one aggregation over the window, minutes on the largest
//     experiments) and the publication (one transaction upserting a few
//     hundred rows) heartbeat every 2 s from their own goroutine; a 10 s
//     heartbeat timeout (five missed beats, so a stalled database
//     connection is not mistaken for a dead worker) is how long a lost
//     worker goes unnoticed. Their StartToClose stays the ceiling of a
//     healthy attempt: 30 min covers the benchmarked 10M-event run (about
//     20 s) many times over on a slower database.
//   - A retry after a lost worker starts after 1 s; the interval doubles
//     for failures that repeat (a database that is down), up to a minute.
var (
	stepOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 15 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: time.Minute, MaximumAttempts: 10, NonRetryableErrorTypes: nonRetryable},
	}
	analyzeOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Minute,
		HeartbeatTimeout:    10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: time.Minute, MaximumAttempts: 5, NonRetryableErrorTypes: nonRetryable},
	}
	publishOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    10 * time.Second,
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
		WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID, Holdout: in.Holdout}
	out := ExperimentResultsResult{ComputedFor: in.ComputedFor}
	// A manual run's window ends at the whole second after its request
	// (results.ManualKey): wait for that instant, so that everything
	// stamped before the request is counted and the version in force at
	// the window's end is final. Runs started before this did not wait.
	if workflow.GetVersion(ctx, "manual-wait", workflow.DefaultVersion, 1) == 1 {
		if key, err := results.ParseKey(in.ComputedFor); err == nil && key.Kind == results.KindManual {
			if wait := key.WindowEnd.Sub(workflow.Now(ctx)); wait > 0 {
				if err := workflow.Sleep(ctx, wait); err != nil {
					return out, err
				}
			}
		}
	}

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
	if in.Holdout {
		return out, nil
	}
	if workflow.GetVersion(ctx, "guardrails", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return out, nil // a run started before guardrails existed
	}
	if err := actOnGuardrails(ctx, run, &out); err != nil {
		return out, err
	}
	ready := ResultsReadyData{ComputedFor: in.ComputedFor, Kind: plan.Kind,
		Rows: out.Rows, Users: out.Users, SRMGate: out.SRMGate, GuardrailBreaches: out.Breaches, WorkflowID: run.WorkflowID}
	// Runs started before verdicts existed announce without one.
	if workflow.GetVersion(ctx, "verdict", workflow.DefaultVersion, 1) == 1 {
		var v activities.VerdictResult
		if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, stepOptions), a.DecideVerdict, run).Get(ctx, &v); err != nil {
			return out, err
		}
		ready.Verdict, out.Recommendation = &v, v.Recommendation
	}
	announce(ctx, in.OrgID, in.ExperimentID, webhooks.EventResultsReady, ready, in.ExperimentID, in.ComputedFor)
	return out, nil
}

// ResultsReadyData is the data of results.ready.
type ResultsReadyData struct {
	ComputedFor       string `json:"computed_for"`
	Kind              string `json:"kind"`
	Rows              int    `json:"rows"`
	Users             int    `json:"users"`
	SRMGate           string `json:"srm_gate"`
	GuardrailBreaches int    `json:"guardrail_breaches"`
	WorkflowID        string `json:"workflow_id"`
	// Verdict: ship, keep_running or stop, with its reasons (absent from
	// runs started before verdicts existed).
	Verdict *activities.VerdictResult `json:"verdict,omitempty"`
}

// actOnGuardrails evaluates the published run's guardrails (each breach
// acted on once, a stop through the lifecycle's transition path) and
// announces what this run did: guardrail.breached per breach,
// experiment.stopped for a stop, srm.failed for a failed SRM gate. The
// experiment's workflow is told to re-read its state after a stop.
func actOnGuardrails(ctx workflow.Context, run activities.RunInput, out *ExperimentResultsResult) error {
	var g activities.GuardrailsResult
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, stepOptions), a.ActOnGuardrails, run).Get(ctx, &g); err != nil {
		return err
	}
	out.Breaches = len(g.Breaches)
	out.Stopped = announceGuardrails(ctx, run.OrgID, run.ExperimentID, run.WorkflowID, g)
	return nil
}

// announceGuardrails announces what a guardrail evaluation acted on
// (guardrail.breached per breach, experiment.stopped for a stop,
// srm.failed) and, after a stop, tells the experiment's workflow to
// re-read its state. It reports whether a breach stopped the experiment.
func announceGuardrails(ctx workflow.Context, orgID, experimentID, workflowID string, g activities.GuardrailsResult) (stopped bool) {
	run := guardrails.Run{OrgID: orgID, ExperimentID: experimentID, WorkflowID: workflowID}
	for _, b := range g.Breaches {
		ev, err := b.Event(run, workflow.Now(ctx))
		announceEvent(ctx, ev, err)
		if b.Stopped {
			stopped = true
			announceLifecycle(ctx, orgID, experimentID, LifecycleEventData{Status: "stopped", Version: b.StoppedVersion,
				Reason: b.Describe(), Actor: audit.SystemActor, WorkflowID: workflowID})
		}
	}
	if g.SRM != nil {
		ev, err := g.SRM.Event(run, workflow.Now(ctx))
		announceEvent(ctx, ev, err)
	}
	if stopped {
		// Only its query's freshness depends on it: ignore a workflow that
		// does not exist (an experiment without a schedule never needed one).
		_ = workflow.SignalExternalWorkflow(ctx, ExperimentWorkflowID(experimentID), "", LifecycleSignal, LifecycleChange{}).Get(ctx, nil)
	}
	return stopped
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
