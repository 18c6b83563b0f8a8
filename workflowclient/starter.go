package workflowclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"gorm.io/gorm"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/webhooks"
	"github.com/expd/expd/workflows"
)

// ErrNotConnected is returned by every start when the server has no
// Temporal client (the API answers it with problem workflows_unavailable).
var ErrNotConnected = errors.New("not connected to Temporal")

// Start policies, one place for every workflow the API starts.
const (
	// KeyRotationTimeout bounds a key rotation, queueing behind a running
	// rotation of the same scope included.
	KeyRotationTimeout = 30 * time.Second
	// webhookStartTimeout bounds a webhook's wait for Temporal to accept
	// its workflow; past it the provider gets 503 and retries later.
	webhookStartTimeout = 5 * time.Second
)

// Starter starts expd's workflows on one task queue. A nil Client makes
// every start fail with ErrNotConnected.
type Starter struct {
	Client    client.Client
	TaskQueue string
	// EvaluatorPoll replaces the evaluators' poll interval (tests); 0:
	// workflows.EvaluatorPollInterval.
	EvaluatorPoll time.Duration
}

// StartResults starts the manual run of an experiment's results under
// ResultsWorkflowID, tagged with its org and experiment. The id is never
// reused: a second start of the same run is not an error, it is the same
// run. It returns the workflow id.
func (s Starter) StartResults(ctx context.Context, in workflows.ExperimentResultsInput) (string, error) {
	id := in.WorkflowID()
	if s.Client == nil {
		return id, ErrNotConnected
	}
	_, err := s.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: s.TaskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: workflows.ExperimentSearchAttributes(in.OrgID, in.ExperimentID),
	}, workflows.ExperimentResults, in)
	if err != nil && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return id, fmt.Errorf("start results run %s: %w", id, err)
	}
	return id, nil
}

// StartIdentitySync starts the sync of one identity-provider webhook
// message (IdentitySyncID).
func (s Starter) StartIdentitySync(ctx context.Context, in workflows.IdentitySyncInput) error {
	return s.startWebhook(ctx, workflows.IdentitySyncID(in.SvixID), workflows.IdentitySync, in)
}

// StartPaymentEvent starts the application of one payment-provider event
// (PaymentEventID).
func (s Starter) StartPaymentEvent(ctx context.Context, in workflows.PaymentEventInput) error {
	return s.startWebhook(ctx, workflows.PaymentEventID(in.Event.ID), workflows.PaymentEvent, in)
}

// startWebhook starts the workflow of one webhook delivery and returns
// once Temporal holds it. The id is never reused: a redelivery finds it
// taken (even after the first run completed) and succeeds too, since the
// event is already applied or being applied.
func (s Starter) startWebhook(ctx context.Context, id string, workflow, input any) error {
	if s.Client == nil {
		return ErrNotConnected
	}
	ctx, cancel := context.WithTimeout(ctx, webhookStartTimeout)
	defer cancel()
	_, err := s.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                    id,
		TaskQueue:             s.TaskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, workflow, input)
	if err != nil && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return fmt.Errorf("start webhook workflow %s: %w", id, err)
	}
	return nil
}

// deliverEventStartOptions start DeliverEvent from outside a workflow, with
// the id and reuse rule workflows.Announce starts it with from a workflow.
func deliverEventStartOptions(taskQueue string, ev webhooks.Event) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                    workflows.DeliverEventID(ev.ID),
		TaskQueue:             taskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}
}

// Announce delivers ev to its org's subscribers from non-workflow code: it
// starts DeliverEvent under DeliverEventID and returns once Temporal holds
// it. An event announced before (by a workflow or here) is success and is
// not delivered again. ErrNotConnected without Temporal.
func (s Starter) Announce(ctx context.Context, ev webhooks.Event) error {
	if err := ev.Check(); err != nil {
		return err
	}
	if s.Client == nil {
		return ErrNotConnected
	}
	ctx, cancel := context.WithTimeout(ctx, webhookStartTimeout)
	defer cancel()
	_, err := s.Client.ExecuteWorkflow(ctx, deliverEventStartOptions(s.TaskQueue, ev), workflows.DeliverEvent, workflows.DeliverEventInput{Event: ev})
	if err != nil && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return fmt.Errorf("announce %s %s: %w", ev.Type, ev.ID, err)
	}
	return nil
}

// AnnounceQueued delivers an event queued in the outbox (webhooks.Enqueue,
// in the transaction of the change it announces) and marks it sent. On
// failure the row stays pending and Redrive delivers it later; either way
// the event id makes it one delivery.
func (s Starter) AnnounceQueued(ctx context.Context, db *gorm.DB, ev webhooks.Event) error {
	if err := s.Announce(ctx, ev); err != nil {
		return err
	}
	return webhooks.MarkSent(ctx, db, []string{ev.ID}, time.Now())
}

// SignalOwed signals the experiment's lifecycle workflow after a change
// that owes it one (experiments.Experiment.PendingStep: a start_at or
// stop_at to arm) and clears the debt for version. On failure the debt
// stays and Redrive signals later.
func (s Starter) SignalOwed(ctx context.Context, db *gorm.DB, orgID, experimentID string, version int) error {
	if err := s.SignalExperiment(ctx, orgID, experimentID, workflows.LifecycleChange{}); err != nil {
		return err
	}
	return experiments.Store{DB: db}.SignalSent(ctx, orgID, experimentID, version)
}

// RunKeyRotation runs the org's rotation of one scope (KeyRotationID) and
// waits for its result. Rotations of one org and scope run one at a time:
// while one runs, the start fails and this one queues behind it. Bound ctx
// by KeyRotationTimeout.
func (s Starter) RunKeyRotation(ctx context.Context, in workflows.KeyRotationInput) (workflows.KeyRotationResult, error) {
	var res workflows.KeyRotationResult
	if s.Client == nil {
		return res, ErrNotConnected
	}
	opts := client.StartWorkflowOptions{
		ID:                                       workflows.KeyRotationID(in.OrgID, string(in.Scope)),
		TaskQueue:                                s.TaskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		WorkflowExecutionTimeout:                 KeyRotationTimeout,
	}
	for {
		run, err := s.Client.ExecuteWorkflow(ctx, opts, workflows.KeyRotation, in)
		var running *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &running) && ctx.Err() == nil {
			// Its outcome does not matter here: this rotation supersedes it.
			_ = s.Client.GetWorkflow(ctx, opts.ID, "").Get(ctx, nil)
			continue
		}
		if err != nil {
			return res, fmt.Errorf("start key rotation %s: %w", opts.ID, err)
		}
		if err := run.Get(ctx, &res); err != nil {
			return res, fmt.Errorf("key rotation %s: %w", opts.ID, err)
		}
		return res, nil
	}
}

// SignalExperiment delivers ch to the experiment's lifecycle workflow
// (ExperimentWorkflowID), starting it when it is not running: Temporal's
// SignalWithStart makes the start and the signal one atomic step, so a
// route never races the workflow and starting twice is the same workflow.
// The routes call it after every change they commit (and after a create
// or update that sets start_at or stop_at); ch.Status empty only asks the
// workflow to re-read the schedule.
func (s Starter) SignalExperiment(ctx context.Context, orgID, experimentID string, ch workflows.LifecycleChange) error {
	if s.Client == nil {
		return ErrNotConnected
	}
	id := workflows.ExperimentWorkflowID(experimentID)
	_, err := s.Client.SignalWithStartWorkflow(ctx, id, workflows.LifecycleSignal, ch, client.StartWorkflowOptions{
		ID: id, TaskQueue: s.TaskQueue,
		// A run that ended (shipped, or failed) may be followed by a new one.
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes: workflows.ExperimentSearchAttributes(orgID, experimentID),
	}, workflows.Experiment, workflows.ExperimentInput{OrgID: orgID, ExperimentID: experimentID})
	if err != nil {
		return fmt.Errorf("signal experiment workflow %s: %w", id, err)
	}
	return nil
}

// ExperimentState asks the experiment's workflow for its state.
func (s Starter) ExperimentState(ctx context.Context, experimentID string) (workflows.ExperimentState, error) {
	var st workflows.ExperimentState
	if s.Client == nil {
		return st, ErrNotConnected
	}
	v, err := s.Client.QueryWorkflow(ctx, workflows.ExperimentWorkflowID(experimentID), "", workflows.StateQuery)
	if err != nil {
		return st, fmt.Errorf("query experiment workflow: %w", err)
	}
	return st, v.Get(&st)
}

// ErrAlreadyRunning is returned by starts that refuse a duplicate of a
// workflow that is still running.
var ErrAlreadyRunning = errors.New("already running")

// StartDayRun computes a nightly day on demand, under the id the daily
// schedule gives that day (ResultsWorkflowID): while a run of the day is
// running, from the schedule or the API, another start fails with
// ErrAlreadyRunning; once it has ended, the day may be computed again.
func (s Starter) StartDayRun(ctx context.Context, in workflows.ExperimentResultsInput) (string, error) {
	id := in.WorkflowID()
	return id, s.startUnlessRunning(ctx, client.StartWorkflowOptions{ID: id,
		TypedSearchAttributes: workflows.ExperimentSearchAttributes(in.OrgID, in.ExperimentID)}, workflows.ExperimentResults, in)
}

// StartBackfill runs DailyResults over an org's day range (in.Day to
// in.LastDay) under BackfillWorkflowID. The same range while it runs fails
// with ErrAlreadyRunning; after it ended it may run again (completed days
// are then counted as already done, failed ones rerun).
func (s Starter) StartBackfill(ctx context.Context, in workflows.DailyResultsInput) (string, error) {
	id := workflows.BackfillWorkflowID(in.OrgID, in.Day, in.LastDay)
	return id, s.startUnlessRunning(ctx, client.StartWorkflowOptions{ID: id}, workflows.DailyResults, in)
}

// startUnlessRunning starts a workflow whose id may be reused once the
// previous run has ended, but never while it runs.
func (s Starter) startUnlessRunning(ctx context.Context, opts client.StartWorkflowOptions, wf any, in any) error {
	if s.Client == nil {
		return ErrNotConnected
	}
	opts.TaskQueue = s.TaskQueue
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	opts.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL
	opts.WorkflowExecutionErrorWhenAlreadyStarted = true
	_, err := s.Client.ExecuteWorkflow(ctx, opts, wf, in)
	if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return fmt.Errorf("start %s: %w", opts.ID, ErrAlreadyRunning)
	}
	if err != nil {
		return fmt.Errorf("start %s: %w", opts.ID, err)
	}
	return nil
}
