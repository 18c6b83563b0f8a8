package experiments

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/webhooks"
)

// What the database owes Temporal after a change (docs/lifecycle.md,
// "What a change owes Temporal"): its announcement, queued in the outbox
// by Transition (LifecycleEvent), and a signal to the experiment's
// lifecycle workflow when the change leaves it a scheduled step to arm
// (signal_pending_since). Both are written in the change's transaction,
// delivered by the caller after the commit and, when that fails, by the
// periodic reconcile (workflows.Redrive).

// pendingStep tells whether an experiment in status with cfg's schedule
// has a step its lifecycle workflow must arm: start_at while scheduled,
// stop_at while running.
func pendingStep(status string, cfg Config) bool {
	return (status == StatusScheduled && cfg.StartAt != nil) || (status == StatusRunning && cfg.StopAt != nil)
}

// PendingStep tells whether the experiment's lifecycle workflow has a
// scheduled step to take: start_at while scheduled, stop_at while running.
func (e Experiment) PendingStep() bool { return pendingStep(e.Status, e.Config) }

// owedSince is signal_pending_since of a new experiment.
func owedSince(status string, cfg Config, now time.Time) *time.Time {
	if !pendingStep(status, cfg) {
		return nil
	}
	return &now
}

// owedUpdate is the value a change sets signal_pending_since to: kept (or
// now) while a signal is owed, NULL when the workflow has nothing to arm
// (an earlier owed signal is then moot too).
func owedUpdate(status string, cfg Config, now time.Time) any {
	if !pendingStep(status, cfg) {
		return nil
	}
	return gorm.Expr("COALESCE(signal_pending_since, ?)", now)
}

// SignalSent records that the experiment's lifecycle workflow was
// signalled after version: the owed signal is cleared unless a later
// change (a higher version) owes one of its own.
func (s Store) SignalSent(ctx context.Context, orgID, experimentID string, version int) error {
	err := s.DB.WithContext(ctx).Model(&Row{}).
		Where("id = ? AND org_id = ? AND current_version = ?", experimentID, orgID, version).
		Update("signal_pending_since", nil).Error
	if err != nil {
		return fmt.Errorf("clear owed signal of %s: %w", experimentID, err)
	}
	return nil
}

// OwedRef names an experiment owed a lifecycle signal, at its version.
type OwedRef struct {
	OrgID   string
	ID      string
	Version int
}

// ListSignalOwed returns up to limit experiments of live orgs owed a
// lifecycle signal, by id after afterID ("" from the start).
func (s Store) ListSignalOwed(ctx context.Context, afterID string, limit int) ([]OwedRef, error) {
	var refs []OwedRef
	q := s.DB.WithContext(ctx).Table("experiments AS e").
		Select("e.org_id AS org_id, e.id AS id, e.current_version AS version").
		Joins("JOIN orgs o ON o.id = e.org_id").
		Where("e.signal_pending_since IS NOT NULL AND o.deleted_at IS NULL")
	if afterID != "" { // "" is no UUID, so PostgreSQL cannot compare with it
		q = q.Where("e.id > ?", afterID)
	}
	if err := q.Order("e.id").Limit(limit).Scan(&refs).Error; err != nil {
		return nil, fmt.Errorf("list experiments owed a signal: %w", err)
	}
	return refs, nil
}

// LifecycleEvent is the announcement Transition queues for a change ch that
// led to exp: the same event (id and data) whoever rebuilds it, so the
// route that made the change can deliver it right after the commit.
func LifecycleEvent(orgID string, exp Experiment, ch Change) (webhooks.Event, bool, error) {
	d := webhooks.LifecycleData{Status: exp.Status, Version: exp.Version, Reason: ch.Reason, Actor: ch.Actor, WorkflowID: ch.WorkflowID}
	if exp.Status == StatusShipped {
		d.ShippedVariant = exp.ShippedVariant
	}
	return webhooks.LifecycleEvent(orgID, exp.ID, exp.UpdatedAt, d)
}
