package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/expd/expd/audit"
	"github.com/expd/expd/experiments"
)

// LifecycleInput names an experiment.
type LifecycleInput struct {
	OrgID        string
	ExperimentID string
}

// LifecycleState is what the experiment's workflow needs of it: its status
// and schedule. Found is false once the experiment is gone.
type LifecycleState struct {
	Found          bool
	Status         string
	Version        int
	StartAt        *time.Time
	StopAt         *time.Time
	ShippedVariant string
}

// LoadLifecycle reads the experiment's status and schedule.
func (a *Activities) LoadLifecycle(ctx context.Context, in LifecycleInput) (LifecycleState, error) {
	exp, err := experiments.Store{DB: a.DB}.Get(ctx, in.OrgID, in.ExperimentID)
	if errors.Is(err, experiments.ErrNotFound) {
		return LifecycleState{}, nil
	}
	if err != nil {
		return LifecycleState{}, err
	}
	return LifecycleState{Found: true, Status: exp.Status, Version: exp.Version, StartAt: exp.StartAt, StopAt: exp.StopAt,
		ShippedVariant: exp.ShippedVariant}, nil
}

// ApplyLifecycleInput is a system lifecycle change (a scheduled start or
// stop). DedupKey names the change: one that was recorded before is not
// applied again, even when the status would allow it (a stop_at that
// fired, followed by a manual start, does not stop the experiment again).
type ApplyLifecycleInput struct {
	OrgID        string
	ExperimentID string
	Action       string
	Reason       string
	OnlyFrom     []string
	WorkflowID   string
	DedupKey     string
}

// ApplyLifecycleResult says whether this workflow made the change (now, or
// in a former attempt whose answer was lost), and the experiment after it.
type ApplyLifecycleResult struct {
	Applied bool
	Status  string
	Version int
}

// ApplyLifecycle applies a scheduled step of the experiment's lifecycle
// workflow through the one transition path, experiments.Store.Transition,
// as actor system with the workflow id. The transition queues the
// change's announcement in the outbox (the workflow announces it too,
// under the same event id) and owes the workflow no signal: it re-reads
// the experiment after the step.
func (a *Activities) ApplyLifecycle(ctx context.Context, in ApplyLifecycleInput) (ApplyLifecycleResult, error) {
	if in.DedupKey == "" {
		return ApplyLifecycleResult{}, temporal.NewNonRetryableApplicationError("a system lifecycle change needs a dedup key", "BadLifecycleChange", nil)
	}
	store := experiments.Store{DB: a.DB}
	wid, done, err := audit.Recorded(ctx, a.DB, in.OrgID, in.DedupKey)
	if err != nil {
		return ApplyLifecycleResult{}, err
	}
	if done {
		exp, err := store.Get(ctx, in.OrgID, in.ExperimentID)
		if err != nil {
			return ApplyLifecycleResult{}, err
		}
		return ApplyLifecycleResult{Applied: wid == in.WorkflowID, Status: exp.Status, Version: exp.Version}, nil
	}
	exp, changed, err := store.Transition(ctx, in.OrgID, in.ExperimentID, experiments.Change{
		Action: in.Action, Reason: in.Reason, OnlyFrom: in.OnlyFrom,
		Actor: audit.SystemActor, WorkflowID: in.WorkflowID, DedupKey: in.DedupKey,
		// Only the experiment's own workflow applies scheduled steps.
		ByLifecycleWorkflow: true,
	})
	switch {
	case errors.Is(err, experiments.ErrNotFound):
		return ApplyLifecycleResult{}, nil
	case experiments.IsTransitionError(err):
		return ApplyLifecycleResult{Status: exp.Status, Version: exp.Version}, nil
	case err != nil:
		return ApplyLifecycleResult{}, err
	}
	return ApplyLifecycleResult{Applied: changed, Status: exp.Status, Version: exp.Version}, nil
}
