package experiments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/audit"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/webhooks"
)

// Lifecycle actions (docs/lifecycle.md). Each one that changes the status
// mints a config version, so SDKs pick it up through the usual ETag path.
const (
	ActionStart = "start"
	ActionStop  = "stop"
	ActionShip  = "ship"
)

// Change is one lifecycle action on an experiment.
type Change struct {
	Action  string // start | stop | ship
	Variant string // ship: the variant everyone gets
	Reason  string // why (shown as status_reason); "" for a plain user action
	// OnlyFrom, when set, makes the change a no-op unless the experiment is
	// in one of these statuses: a timer that fires after a manual action
	// must not undo it.
	OnlyFrom   []string
	Actor      string // user id, or audit.SystemActor
	WorkflowID string // of a system actor
	DedupKey   string // of the audit entry; a retried system action records once
	// ByLifecycleWorkflow: the experiment's own lifecycle workflow makes the
	// change and re-reads the experiment after it, so no signal is owed.
	ByLifecycleWorkflow bool
}

// TransitionError is a change that the experiment's status does not allow
// (409); its Err holds the field errors.
type TransitionError struct{ Err error }

func (e *TransitionError) Error() string { return e.Err.Error() }
func (e *TransitionError) Unwrap() error { return e.Err }

func refuse(field, format string, args ...any) error {
	return &TransitionError{Err: validate.New(field, format, args...)}
}

// targetStatus says what a change makes of an experiment in status from
// with config cfg: the new status, or "" for a no-op.
func targetStatus(ch Change, from string, cfg *Config) (string, error) {
	if len(ch.OnlyFrom) > 0 && !contains(ch.OnlyFrom, from) {
		return "", nil
	}
	switch ch.Action {
	case ActionStart:
		switch from {
		case StatusRunning:
			return "", nil
		case StatusShipped:
			return "", refuse("status", "a shipped experiment cannot be started again: shipping is final")
		}
		return StatusRunning, nil
	case ActionStop:
		switch from {
		case StatusStopped:
			return "", nil
		case StatusShipped:
			return "", refuse("status", "a shipped experiment cannot be stopped: it serves %q to everyone", cfg.ShippedVariant)
		}
		return StatusStopped, nil
	case ActionShip:
		if ch.Variant == "" {
			return "", validate.New("variant", "is required: the variant everyone gets")
		}
		if !cfg.hasVariant(ch.Variant) {
			return "", validate.New("variant", "%q is not a variant of the experiment's allocation", ch.Variant)
		}
		if from == StatusShipped {
			if cfg.ShippedVariant == ch.Variant {
				return "", nil
			}
			return "", refuse("variant", "the experiment already shipped %q: shipping is final", cfg.ShippedVariant)
		}
		return StatusShipped, nil
	}
	return "", validate.New("action", "%q is not a lifecycle action", ch.Action)
}

// Transition applies ch to the experiment named by idOrName. changed is
// false when the experiment already was where ch leads (the routes are
// idempotent) or OnlyFrom excluded it; nothing is written then.
func (s Store) Transition(ctx context.Context, orgID, idOrName string, ch Change) (exp Experiment, changed bool, err error) {
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		row, before, err := lockCurrent(tx, orgID, idOrName)
		if err != nil {
			return err
		}
		exp = before
		to, err := targetStatus(ch, row.Status, &before.Config)
		if err != nil || to == "" {
			return err
		}
		cfg := before.Config
		cfg.Status, cfg.StatusReason = to, ch.Reason
		if to == StatusShipped {
			cfg.ShippedVariant = ch.Variant
		}
		row.Status = to
		row.CurrentVersion++
		row.UpdatedAt = time.Now().UTC()
		owed := owedUpdate(to, cfg, row.UpdatedAt)
		if ch.ByLifecycleWorkflow {
			owed = nil
		}
		updates := map[string]any{"status": to, "current_version": row.CurrentVersion, "updated_at": row.UpdatedAt,
			"signal_pending_since": owed}
		if to == StatusShipped {
			updates["shipped_at"] = row.UpdatedAt
		}
		if err := tx.Model(&row).Where("org_id = ?", orgID).Updates(updates).Error; err != nil {
			return fmt.Errorf("update experiment status: %w", err)
		}
		if exp, err = insertVersion(tx, row, cfg, before.BucketMap, ch.Actor); err != nil {
			return err
		}
		summary := fmt.Sprintf("%s: %s -> %s", ch.Action, before.Status, to)
		if ch.Reason != "" {
			summary += " (" + ch.Reason + ")"
		}
		err = audit.Record(ctx, tx, audit.Entry{OrgID: orgID, ExperimentID: row.ID, Action: auditAction(to),
			Actor: ch.Actor, WorkflowID: ch.WorkflowID, Summary: summary, Before: summarize(before), After: summarize(exp),
			DedupKey: ch.DedupKey, At: row.UpdatedAt})
		if err != nil {
			return err
		}
		// The announcement commits with the change (the outbox): whoever
		// made it delivers it after the commit, the reconcile if that fails.
		ev, ok, err := LifecycleEvent(orgID, exp, ch)
		if err != nil {
			return err
		}
		if ok {
			if err := webhooks.Enqueue(ctx, tx, ev); err != nil {
				return err
			}
		}
		changed = true
		return nil
	})
	return exp, changed, err
}

// auditAction is the audit action of entering status to: the name of the
// event announcing it (experiment.started for running), so the log and
// the webhooks speak of the same thing.
func auditAction(to string) string {
	switch to {
	case StatusRunning:
		return audit.ExperimentStarted
	case StatusStopped:
		return audit.ExperimentStopped
	case StatusShipped:
		return audit.ExperimentShipped
	}
	return "experiment." + to
}

// initialStatus is the status of a new experiment: the one asked for, else
// scheduled when start_at lies ahead, else running.
func initialStatus(cfg *Config, now time.Time) string {
	switch {
	case cfg.Status != "":
		return cfg.Status
	case cfg.StartAt != nil && cfg.StartAt.After(now):
		return StatusScheduled
	}
	return StatusRunning
}

// carryLifecycle fills an update's lifecycle fields from the current
// version: the status is kept unless asked for (a draft or stopped
// experiment whose start_at moves ahead becomes scheduled), a shipped
// experiment stays shipped, and the reason and shipped variant are the
// lifecycle's, never the request's.
func carryLifecycle(cfg *Config, cur Experiment, now time.Time) error {
	requested := cfg.Status
	cfg.ShippedVariant, cfg.StatusReason = cur.ShippedVariant, cur.StatusReason
	if cur.Status == StatusShipped {
		if requested != "" && requested != StatusShipped {
			return refuse("status", "a shipped experiment keeps serving %q: shipping is final", cur.ShippedVariant)
		}
		cfg.Status = StatusShipped
		return nil
	}
	if requested == "" {
		cfg.Status = cur.Status
		if (cur.Status == StatusDraft || cur.Status == StatusScheduled) && cfg.StartAt != nil && cfg.StartAt.After(now) {
			cfg.Status = StatusScheduled
		}
	}
	if cfg.Status != cur.Status {
		cfg.StatusReason = ""
	}
	return nil
}

// requestable checks the status a create or update asks for.
func requestable(status string) error {
	if status == "" || statuses[status] {
		return nil
	}
	return validate.New("status", "must be %q, %q or %q (start_at schedules, the ship route ships)", StatusDraft, StatusRunning, StatusStopped)
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// IsTransitionError tells whether err is a refused lifecycle change.
func IsTransitionError(err error) bool {
	var te *TransitionError
	return errors.As(err, &te)
}

// IsStatus tells whether s is a lifecycle status.
func IsStatus(s string) bool { return allStatuses[s] }

// fixTuning keeps N*'s inputs (sequential_tuning, expected_users) as they
// were when the experiment started: an update that leaves one out (or
// nulls it) keeps it, one that changes it is refused. An always-valid
// sequence tuned after the data were seen is no longer always valid.
func fixTuning(errs *validate.Errors, cfg *Config, cur Experiment) {
	if !TuningFixed(cur.Status) {
		return // not started: the team may still plan
	}
	for _, f := range []struct {
		name string
		next **float64
		cur  *float64
	}{
		{"sequential_tuning", &cfg.SequentialTuning, cur.SequentialTuning},
		{"expected_users", &cfg.ExpectedUsers, cur.ExpectedUsers},
	} {
		switch {
		case *f.next == nil:
			*f.next = f.cur
		case f.cur == nil || **f.next != *f.cur:
			errs.Add(f.name, "cannot change once the experiment has started: N* is fixed at the start, or the always-valid intervals lose their guarantee (omit it to keep it)")
		}
	}
}

// TuningFixed tells whether an experiment in status has started, so its
// N* inputs no longer change (fixTuning).
func TuningFixed(status string) bool {
	return status == StatusRunning || status == StatusStopped || status == StatusShipped
}
