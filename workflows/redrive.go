package workflows

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/webhooks"
)

// redrivePageSize bounds the announcements and the signals one Redrive run
// handles (each a child start or a signal in its history); the next page
// continues as new.
const redrivePageSize = 100

// RedriveInput is empty when the schedule (or a worker start) starts it.
// The cursors and totals carry a run's progress across continue-as-new;
// EventsDone and SignalsDone say a list is exhausted.
type RedriveInput struct {
	AfterEvent      webhooks.QueueCursor
	AfterExperiment string
	EventsDone      bool
	SignalsDone     bool
	Totals          RedriveResult
}

// RedriveResult counts one reconcile.
type RedriveResult struct {
	Announced      int   // pending announcements whose delivery was started now, or found started
	AnnounceFailed int   // left pending for the next run
	Signalled      int   // experiments whose lifecycle workflow was signalled, or started
	SignalFailed   int   // left owed for the next run
	Purged         int64 // sent outbox rows older than webhooks.KeepSent, deleted
	// EvaluatorsStarted counts live evaluators whose workflow was not
	// running and was started now (created while Temporal was away).
	EvaluatorsStarted int
}

// Redrive is the periodic reconcile (schedule RedriveScheduleID, every
// five minutes, and once at every worker start): it delivers what
// committed changes owe Temporal and did not get, because Temporal was
// unreachable or the process died between the commit and the call.
//
//   - Pending announcements (the outbox): DeliverEvent is started under
//     each event's id, which Temporal never reuses, so an event already
//     delivered (by the route, the workflow that made the change, or an
//     earlier reconcile) is found started and not delivered again; the
//     row is then marked sent.
//   - Owed lifecycle signals: the experiment's workflow is started when it
//     is missing (it reads the experiment fresh) or signalled to re-read
//     it, and the debt is cleared at the version that owed it.
//
// What fails stays pending for the next run; a run never fails on it.
func Redrive(ctx workflow.Context, in RedriveInput) (RedriveResult, error) {
	res := in.Totals
	actx := workflow.WithActivityOptions(ctx, stepOptions)
	next := RedriveInput{EventsDone: in.EventsDone, SignalsDone: in.SignalsDone}
	if !in.EventsDone {
		var page activities.PendingAnnouncementsResult
		err := workflow.ExecuteActivity(actx, a.ListPendingAnnouncements, activities.PendingAnnouncementsInput{After: in.AfterEvent, Limit: redrivePageSize}).Get(ctx, &page)
		if err != nil {
			return res, err
		}
		if sent := announceAll(ctx, page.Events, &res); len(sent) > 0 {
			if err := workflow.ExecuteActivity(actx, a.MarkAnnounced, activities.MarkAnnouncedInput{EventIDs: sent}).Get(ctx, nil); err != nil {
				return res, err
			}
		}
		next.AfterEvent, next.EventsDone = page.Next, page.Next == (webhooks.QueueCursor{})
	}
	if !in.SignalsDone {
		var page activities.OwedSignalsResult
		err := workflow.ExecuteActivity(actx, a.ListOwedSignals, activities.OwedSignalsInput{AfterID: in.AfterExperiment, Limit: redrivePageSize}).Get(ctx, &page)
		if err != nil {
			return res, err
		}
		if done := signalAll(ctx, page.Experiments, &res); len(done) > 0 {
			if err := workflow.ExecuteActivity(actx, a.MarkSignalsSent, activities.SignalsSentInput{Experiments: done}).Get(ctx, nil); err != nil {
				return res, err
			}
		}
		next.AfterExperiment, next.SignalsDone = page.Next, page.Next == ""
	}
	if !next.EventsDone || !next.SignalsDone {
		next.Totals = res
		return res, workflow.NewContinueAsNewError(ctx, Redrive, next)
	}
	var purged activities.PurgeAnnouncedResult
	cutoff := workflow.Now(ctx).Add(-webhooks.KeepSent)
	if err := workflow.ExecuteActivity(actx, a.PurgeAnnounced, activities.PurgeAnnouncedInput{SentBefore: cutoff}).Get(ctx, &purged); err != nil {
		return res, err
	}
	res.Purged += purged.Deleted
	// Versioned: histories recorded before evaluators end here.
	if workflow.GetVersion(ctx, "redrive-evaluators", workflow.DefaultVersion, 1) == 1 {
		var live activities.LiveEvaluatorsResult
		if err := workflow.ExecuteActivity(actx, a.ListLiveEvaluators, activities.LiveEvaluatorsInput{}).Get(ctx, &live); err != nil {
			return res, err
		}
		res.EvaluatorsStarted = startEvaluators(ctx, live.IDs)
	}
	return res, nil
}

// startEvaluators starts the workflow of each evaluator that has none
// running (one that runs answers already-started, which is the common
// case) and returns how many it started.
func startEvaluators(ctx workflow.Context, ids []string) int {
	starts := make([]workflow.ChildWorkflowFuture, len(ids))
	for i, id := range ids {
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID: EvaluatorID(id),
			// It lives as long as its evaluator, not as this run.
			ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		})
		starts[i] = workflow.ExecuteChildWorkflow(cctx, Evaluator, EvaluatorInput{EvaluatorID: id})
	}
	started := 0
	for i, f := range starts {
		switch err := f.GetChildWorkflowExecution().Get(ctx, nil); {
		case err == nil:
			started++
		case temporal.IsWorkflowExecutionAlreadyStartedError(err):
		default:
			workflow.GetLogger(ctx).Error("evaluator workflow not started", "evaluator", ids[i], "error", err)
		}
	}
	return started
}

// announceAll starts the delivery of each event (all at once) and returns
// the ids whose delivery now exists.
func announceAll(ctx workflow.Context, evs []webhooks.Event, res *RedriveResult) []string {
	futures := make([]workflow.ChildWorkflowFuture, len(evs))
	for i, ev := range evs {
		if ev.Check() == nil {
			futures[i] = startDelivery(ctx, ev)
		}
	}
	var sent []string
	for i, f := range futures {
		if f == nil {
			res.AnnounceFailed++
			continue
		}
		if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			res.AnnounceFailed++
			workflow.GetLogger(ctx).Error("pending announcement not delivered", "event_id", evs[i].ID, "type", evs[i].Type, "error", err)
			continue
		}
		sent = append(sent, evs[i].ID)
		res.Announced++
	}
	return sent
}

// signalAll starts the lifecycle workflow of each experiment owed a
// signal, or signals it when it runs, and returns those reached.
func signalAll(ctx workflow.Context, owed []activities.OwedSignal, res *RedriveResult) []activities.OwedSignal {
	starts := make([]workflow.ChildWorkflowFuture, len(owed))
	for i, e := range owed {
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID: ExperimentWorkflowID(e.ID),
			// It lives as long as its experiment, not as this run.
			ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
			// A run that ended (shipped, or failed) may be followed by a new one.
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			TypedSearchAttributes: ExperimentSearchAttributes(e.OrgID, e.ID),
		})
		starts[i] = workflow.ExecuteChildWorkflow(cctx, Experiment, ExperimentInput{OrgID: e.OrgID, ExperimentID: e.ID})
	}
	signals := make([]workflow.Future, len(owed))
	reached := make([]bool, len(owed))
	for i, f := range starts {
		switch err := f.GetChildWorkflowExecution().Get(ctx, nil); {
		case err == nil:
			reached[i] = true // a new workflow reads the experiment fresh
		case temporal.IsWorkflowExecutionAlreadyStartedError(err):
			signals[i] = workflow.SignalExternalWorkflow(ctx, ExperimentWorkflowID(owed[i].ID), "", LifecycleSignal, LifecycleChange{})
		default:
			workflow.GetLogger(ctx).Error("owed lifecycle workflow not started", "experiment_id", owed[i].ID, "error", err)
		}
	}
	for i, f := range signals {
		if f == nil {
			continue
		}
		if err := f.Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Error("owed lifecycle signal not delivered", "experiment_id", owed[i].ID, "error", err)
			continue
		}
		reached[i] = true
	}
	var done []activities.OwedSignal
	for i, e := range owed {
		if !reached[i] {
			res.SignalFailed++
			continue
		}
		done = append(done, e)
		res.Signalled++
	}
	return done
}
