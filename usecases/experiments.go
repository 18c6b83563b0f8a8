package usecases

import (
	"context"
	"errors"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/workflowclient"
)

// CreateExperiment stores cfg as a new experiment of the org (version 1).
func (s Service) CreateExperiment(ctx context.Context, orgID, actor string, cfg experiments.Config) (experiments.Experiment, error) {
	metrics.FillGoals(&cfg)
	s.expectRecentUsers(ctx, orgID, &cfg)
	exp, err := s.experiments().Create(ctx, orgID, actor, cfg)
	if err != nil {
		return exp, err
	}
	s.saved(ctx, orgID, exp)
	return exp, nil
}

// UpdateExperiment stores cfg as the next version of the experiment named
// by idOrName.
func (s Service) UpdateExperiment(ctx context.Context, orgID, idOrName, actor string, cfg experiments.Config) (experiments.Experiment, error) {
	metrics.FillGoals(&cfg)
	exp, err := s.experiments().Update(ctx, orgID, idOrName, actor, cfg)
	if err != nil {
		return exp, err
	}
	s.saved(ctx, orgID, exp)
	return exp, nil
}

// PatchExperiment applies a JSON merge patch to the experiment's current
// config and stores the result as its next version; ifMatch (0: none) is
// the version the caller read.
func (s Service) PatchExperiment(ctx context.Context, orgID, idOrName, actor string, ifMatch int, patch []byte) (experiments.Experiment, error) {
	exp, err := s.experiments().Patch(ctx, orgID, idOrName, actor, ifMatch, patch, metrics.FillGoals)
	if err != nil {
		return exp, err
	}
	s.saved(ctx, orgID, exp)
	return exp, nil
}

// Transition applies a lifecycle change (start, stop, ship) to the
// experiment named by idOrName; a change that leaves the experiment where
// it was sets nothing off (the routes are idempotent).
func (s Service) Transition(ctx context.Context, orgID, idOrName string, ch experiments.Change) (experiments.Experiment, error) {
	exp, changed, err := s.experiments().Transition(ctx, orgID, idOrName, ch)
	if err != nil || !changed {
		return exp, err
	}
	s.SDK.Configs.Expire(orgID)
	s.announce(ctx, orgID, exp, ch)
	s.signalOwed(ctx, orgID, exp)
	return exp, nil
}

// saved follows a create or update: the org's served configs change, and
// the lifecycle workflow may have a new start_at or stop_at to arm.
func (s Service) saved(ctx context.Context, orgID string, exp experiments.Experiment) {
	s.SDK.Configs.Expire(orgID)
	s.signalOwed(ctx, orgID, exp)
}

// announce delivers the announcement the transition queued in the outbox
// with the change. The change is committed, so a failure does not fail
// the caller: the row stays pending and the reconcile (workflows.Redrive,
// every few minutes) delivers it.
func (s Service) announce(ctx context.Context, orgID string, exp experiments.Experiment, ch experiments.Change) {
	ev, ok, err := experiments.LifecycleEvent(orgID, exp, ch)
	if err == nil && ok {
		err = s.Workflows.AnnounceQueued(ctx, s.DB, ev)
	}
	if err != nil && !errors.Is(err, workflowclient.ErrNotConnected) {
		s.Logger.WarnContext(ctx, "announcement left to the reconcile", "org_id", orgID, "experiment_id", exp.ID, "status", exp.Status, "error", err)
	}
}

// signalOwed signals the experiment's lifecycle workflow after a change
// that left it a scheduled step to arm (a start_at while scheduled, a
// stop_at while running): the change owes it that signal
// (signal_pending_since, written with the change). A failure does not
// fail the caller: the debt stays and the reconcile signals. Without
// Temporal (tests, a dev server started without it) the debt stays too.
func (s Service) signalOwed(ctx context.Context, orgID string, exp experiments.Experiment) {
	if !exp.PendingStep() {
		return
	}
	err := s.Workflows.SignalOwed(ctx, s.DB, orgID, exp.ID, exp.Version)
	if err != nil && !errors.Is(err, workflowclient.ErrNotConnected) {
		s.Logger.WarnContext(ctx, "experiment workflow signal left to the reconcile", "org_id", orgID, "experiment_id", exp.ID, "error", err)
	}
}

// expectRecentUsers gives a new config that sets neither sequential_tuning
// nor expected_users the org's recent traffic as expected_users, so its
// N* fits the org's scale rather than stats.DefaultNStar; stored in the
// config, it is fixed from the start like a value the team gave. Fewer
// users than experiments.MinSequentialTuning, or a count that fails,
// leave the default (logged: creating an experiment does not depend on
// the analytics engine).
func (s Service) expectRecentUsers(ctx context.Context, orgID string, cfg *experiments.Config) {
	if cfg.SequentialTuning != nil || cfg.ExpectedUsers != nil || s.RecentUsers == nil {
		return
	}
	n, err := s.RecentUsers(ctx, orgID)
	if err != nil {
		s.Logger.WarnContext(ctx, "recent traffic for expected_users", "org_id", orgID, "error", err)
		return
	}
	if n < experiments.MinSequentialTuning {
		return
	}
	v := float64(min(n, experiments.MaxSequentialTuning))
	cfg.ExpectedUsers = &v
}
