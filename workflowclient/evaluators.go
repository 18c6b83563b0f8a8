package workflowclient

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"github.com/expd/expd/evaluators"
	"github.com/expd/expd/workflows"
)

// evaluatorStartTimeout bounds a route's wait for Temporal to accept an
// evaluator's workflow; the worker's reconcile starts it later otherwise.
const evaluatorStartTimeout = 5 * time.Second

func (s Starter) evaluatorOptions(id string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID: workflows.EvaluatorID(id), TaskQueue: s.TaskQueue,
		// One run at a time; a deleted evaluator's run ended, and the id
		// is never live again (ids are not reused).
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}
}

// StartEvaluator starts the workflow of an evaluator (EvaluatorID) unless
// it runs already. Only the id crosses: the activities read the spec and
// the judge's key.
func (s Starter) StartEvaluator(ctx context.Context, id string) error {
	if s.Client == nil {
		return ErrNotConnected
	}
	ctx, cancel := context.WithTimeout(ctx, evaluatorStartTimeout)
	defer cancel()
	if _, err := s.Client.ExecuteWorkflow(ctx, s.evaluatorOptions(id), workflows.Evaluator, workflows.EvaluatorInput{EvaluatorID: id, PollInterval: s.EvaluatorPoll}); err != nil {
		return fmt.Errorf("start evaluator %s: %w", id, err)
	}
	return nil
}

// BackfillEvaluator asks the evaluator's workflow (started if it is not
// running) to evaluate the calls with ts in [from, to).
func (s Starter) BackfillEvaluator(ctx context.Context, id string, from, to time.Time) error {
	if s.Client == nil {
		return ErrNotConnected
	}
	ctx, cancel := context.WithTimeout(ctx, evaluatorStartTimeout)
	defer cancel()
	_, err := s.Client.SignalWithStartWorkflow(ctx, workflows.EvaluatorID(id), workflows.BackfillSignal,
		workflows.BackfillRequest{From: from, To: to}, s.evaluatorOptions(id), workflows.Evaluator, workflows.EvaluatorInput{EvaluatorID: id, PollInterval: s.EvaluatorPoll})
	if err != nil {
		return fmt.Errorf("backfill evaluator %s: %w", id, err)
	}
	return nil
}

// ReconcileEvaluators starts the workflow of every live evaluator that
// has none (created while Temporal was unreachable, or terminated by
// hand); it returns how many it checked.
func (s Starter) ReconcileEvaluators(ctx context.Context, db *gorm.DB) (int, error) {
	ids, err := evaluators.Live(ctx, db)
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		if err := s.StartEvaluator(ctx, id); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}

// StartEvaluatorOrLog is StartEvaluator from a route: the evaluator is
// stored, so a failure to start is logged and left to the next reconcile
// (Redrive, every five minutes, or a worker start).
func (s Starter) StartEvaluatorOrLog(ctx context.Context, log *slog.Logger, id string) {
	if err := s.StartEvaluator(ctx, id); err != nil {
		log.WarnContext(ctx, "evaluator stored; its workflow starts at the next reconcile (within five minutes)", "evaluator", id, "error", err)
	}
}
