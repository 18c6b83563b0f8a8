package workflowclient

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/expd/expd/experiments"
)

// reconcilePageSize experiments are read per query of a reconciliation.
const reconcilePageSize = 200

// ReconcileResult counts a reconciliation.
type ReconcileResult struct {
	Checked   int // scheduled or running experiments read
	Signalled int // experiments with a pending step, whose workflow was signalled (started if missing)
}

// ReconcileExperiments gives every experiment with a pending scheduled step
// (scheduled with a start_at, running with a stop_at) its lifecycle
// workflow: one created before the workflow existed, or whose workflow
// was terminated by hand, would otherwise wait for its next change (a
// signal a change owes is also re-driven every five minutes by Redrive). It sends each one an empty
// LifecycleChange with SignalWithStart: a missing workflow is started, an
// existing one re-reads the schedule, so running it again (every worker
// start) changes nothing. Experiments without a schedule need no workflow
// (the routes start one when they change them).
func (s Starter) ReconcileExperiments(ctx context.Context, db *gorm.DB) (ReconcileResult, error) {
	var res ReconcileResult
	store := experiments.Store{DB: db}
	for after := ""; ; {
		page, err := store.ListScheduledOrRunning(ctx, after, reconcilePageSize)
		if err != nil {
			return res, err
		}
		for _, ref := range page {
			res.Checked++
			exp, err := store.Get(ctx, ref.OrgID, ref.ID)
			if errors.Is(err, experiments.ErrNotFound) {
				continue
			}
			if err != nil {
				return res, fmt.Errorf("reconcile %s: %w", ref.ID, err)
			}
			if !exp.PendingStep() {
				continue
			}
			if err := s.SignalOwed(ctx, db, ref.OrgID, ref.ID, exp.Version); err != nil {
				return res, fmt.Errorf("reconcile %s: %w", ref.ID, err)
			}
			res.Signalled++
		}
		if len(page) < reconcilePageSize {
			return res, nil
		}
		after = page[len(page)-1].ID
	}
}
