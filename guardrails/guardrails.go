// Package guardrails decides what a published results run means for an
// experiment's guardrails (docs/lifecycle.md): Evaluate reads each guarded
// metric's headline interval, Act records each breach once in the audit
// log and, for action stop, stops the experiment through the lifecycle's
// one transition path (experiments.Store.Transition). A breach is acted on
// once per (experiment, metric, variant): its audit entry's dedup key is
// the breach's identity, so retries, duplicate runs and a later run that
// still shows the breach change nothing.
package guardrails

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/audit"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/results"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/webhooks"
)

// Breach is one guarded metric of one treatment whose headline interval
// lies wholly beyond the allowed change in the bad direction.
type Breach struct {
	Key          string  `json:"key"` // audit dedup key: guardrail/<experiment>/<metric>/<variant>
	Metric       string  `json:"metric"`
	Variant      string  `json:"variant"`
	Control      string  `json:"control_variant"`
	Action       string  `json:"action"` // stop | alert
	BadDirection string  `json:"bad_direction"`
	MaxChange    float64 `json:"max_change"`
	Relative     bool    `json:"relative"`
	// Low and High are the headline interval the rule read (relative or
	// absolute as the rule says); Effect the point estimate on that scale.
	Low         float64 `json:"ci_low"`
	High        float64 `json:"ci_high"`
	Effect      float64 `json:"effect"`
	Sequential  bool    `json:"sequential"`
	NControl    int64   `json:"n_control"`
	NTreatment  int64   `json:"n_treatment"`
	ComputedFor string  `json:"computed_for"`
	// Stopped is set by Act when this breach stopped the experiment, with
	// the config version the stop minted.
	Stopped        bool `json:"stopped"`
	StoppedVersion int  `json:"stopped_version,omitempty"`
}

// BreachKey is the identity of a breach: acted on once.
func BreachKey(experimentID, metric, variant string) string {
	return "guardrail/" + experimentID + "/" + metric + "/" + variant
}

// StopKey is the dedup key of the stop a breach causes.
func StopKey(experimentID, metric, variant string) string {
	return "guardrail-stop/" + experimentID + "/" + metric + "/" + variant
}

// SRMKey is the identity of an SRM failure: alerted once per experiment
// config version (a new allocation deserves a new alert).
func SRMKey(experimentID string, version int) string {
	return fmt.Sprintf("srm/%s/v%d", experimentID, version)
}

// Evaluate returns the breaches in rows (one run's rows) of the metrics of
// cfg that carry a guardrail. A row without a defined interval on the
// rule's scale (an undefined test, a relative lift over a zero control)
// breaches nothing.
func Evaluate(experimentID string, cfg experiments.Config, rows []results.Row) []Breach {
	rules := map[string]*experiments.Guardrail{}
	for _, m := range cfg.Metrics {
		if m.Guardrail != nil {
			rules[m.Name] = m.Guardrail
		}
	}
	var out []Breach
	for _, r := range rows {
		g := rules[r.Metric]
		if g == nil || r.Undefined != "" {
			continue
		}
		low, high, effect := r.CILow, r.CIHigh, r.Effect
		if g.Relative {
			if r.RelCILow == nil || r.RelCIHigh == nil || r.RelLift == nil {
				continue
			}
			low, high, effect = *r.RelCILow, *r.RelCIHigh, *r.RelLift
		}
		if breached, ok := g.Breached(low, high); !ok || !breached {
			continue
		}
		out = append(out, Breach{
			Key: BreachKey(experimentID, r.Metric, r.Variant), Metric: r.Metric, Variant: r.Variant, Control: r.ControlVariant,
			Action: g.Action, BadDirection: g.BadDirection, MaxChange: g.MaxChange, Relative: g.Relative,
			Low: low, High: high, Effect: effect, Sequential: r.Sequential,
			NControl: r.NControl, NTreatment: r.NTreatment, ComputedFor: r.ComputedFor,
		})
	}
	return out
}

// Run names the results run and the workflow acting on it.
type Run struct {
	OrgID        string
	ExperimentID string
	ComputedFor  string
	WorkflowID   string
}

// Describe is the one-line reason of a breach (status_reason and audit).
func (b Breach) Describe() string {
	scale, unit := "absolute", ""
	if b.Relative {
		scale, unit = "relative", " (fraction of control)"
	}
	return fmt.Sprintf("guardrail on %s: %s is worse than %s: its %s change interval [%.4g, %.4g]%s lies beyond the allowed %s of %g (run %s)",
		b.Metric, b.Variant, b.Control, scale, b.Low, b.High, unit, b.BadDirection, b.MaxChange, b.ComputedFor)
}

// Act records each breach once and applies its action; it returns the
// breaches this run acted on: those it recorded now, and those a former
// attempt of the same workflow recorded (so a retry after a lost answer
// still announces them; their event ids are the same). Breaches recorded
// by another run are left out: they were acted on then.
func Act(ctx context.Context, db *gorm.DB, run Run, breaches []Breach, at time.Time) ([]Breach, error) {
	var acted []Breach
	for _, b := range breaches {
		var mine bool
		err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			first, err := audit.RecordOnce(ctx, tx, audit.Entry{OrgID: run.OrgID, ExperimentID: run.ExperimentID,
				Action: audit.GuardrailBreached, Actor: audit.SystemActor, WorkflowID: run.WorkflowID,
				Summary: b.Describe() + "; action " + b.Action, After: b, DedupKey: b.Key, At: at})
			if err != nil || !first {
				return err
			}
			mine = true
			if b.Action == experiments.GuardrailStop {
				exp, changed, err := experiments.Store{DB: tx}.Transition(ctx, run.OrgID, run.ExperimentID, experiments.Change{
					Action: experiments.ActionStop, Reason: b.Describe(), OnlyFrom: []string{experiments.StatusRunning},
					Actor: audit.SystemActor, WorkflowID: run.WorkflowID, DedupKey: StopKey(run.ExperimentID, b.Metric, b.Variant),
				})
				if err != nil {
					return err
				}
				b.Stopped, b.StoppedVersion = changed, exp.Version
			}
			// The stop queued its experiment.stopped; the breach's own
			// announcement commits with it too.
			ev, err := b.Event(run, at)
			if err != nil {
				return err
			}
			return webhooks.Enqueue(ctx, tx, ev)
		})
		if err != nil {
			return acted, fmt.Errorf("act on %s: %w", b.Key, err)
		}
		if !mine {
			if mine, err = recordedBy(ctx, db, run, b.Key); err != nil {
				return acted, err
			}
			if mine && b.Action == experiments.GuardrailStop {
				if err := fillStop(ctx, db, run, &b); err != nil {
					return acted, err
				}
			}
		}
		if mine {
			acted = append(acted, b)
		}
	}
	return acted, nil
}

// recordedBy tells whether the entry key was recorded by this run's workflow.
func recordedBy(ctx context.Context, db *gorm.DB, run Run, key string) (bool, error) {
	wid, ok, err := audit.Recorded(ctx, db, run.OrgID, key)
	return ok && wid == run.WorkflowID, err
}

// fillStop tells, on a retry, whether the former attempt's stop happened
// (its audit entry exists) and at which version the experiment is now.
func fillStop(ctx context.Context, db *gorm.DB, run Run, b *Breach) error {
	stopped, err := recordedBy(ctx, db, run, StopKey(run.ExperimentID, b.Metric, b.Variant))
	if err != nil || !stopped {
		return err
	}
	exp, err := experiments.Store{DB: db}.Get(ctx, run.OrgID, run.ExperimentID)
	if err != nil {
		return fmt.Errorf("read stopped experiment: %w", err)
	}
	b.Stopped, b.StoppedVersion = true, exp.Version
	return nil
}

// SRMFailure is a run whose sample-ratio gate failed.
type SRMFailure struct {
	Key               string             `json:"key"`
	ComputedFor       string             `json:"computed_for"`
	ExperimentVersion int                `json:"experiment_version"`
	SRM               results.SRMSummary `json:"srm"`
}

// ErrNoRun is returned when the run to evaluate is not recorded.
var ErrNoRun = errors.New("results run not recorded")

// ActOnSRM records the run's SRM failure once per experiment version; it
// returns the failure when this run recorded it (now or in a former
// attempt), nil otherwise (the gate passed, or another run alerted).
func ActOnSRM(ctx context.Context, db *gorm.DB, run Run, srm results.SRMSummary, version int, at time.Time) (*SRMFailure, error) {
	if srm.Gate != stats.GateFail {
		return nil, nil
	}
	f := &SRMFailure{Key: SRMKey(run.ExperimentID, version), ComputedFor: run.ComputedFor, ExperimentVersion: version, SRM: srm}
	var first bool
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		first, err = audit.RecordOnce(ctx, tx, audit.Entry{OrgID: run.OrgID, ExperimentID: run.ExperimentID,
			Action: audit.SRMFailed, Actor: audit.SystemActor, WorkflowID: run.WorkflowID,
			Summary: fmt.Sprintf("sample ratio mismatch: chi-square %.4g, p %.3g (run %s, version %d); results are unreliable", srm.ChiSquare, srm.PValue, run.ComputedFor, version),
			After:   f, DedupKey: f.Key, At: at})
		if err != nil || !first {
			return err
		}
		ev, err := f.Event(run, at)
		if err != nil {
			return err
		}
		return webhooks.Enqueue(ctx, tx, ev)
	})
	if err != nil {
		return nil, err
	}
	if !first {
		if mine, err := recordedBy(ctx, db, run, f.Key); err != nil || !mine {
			return nil, err
		}
	}
	return f, nil
}

// BreachData is the data of guardrail.breached: the breach and the run's
// workflow.
type BreachData struct {
	Breach
	WorkflowID string `json:"workflow_id"`
}

// Event is the guardrail.breached announcing b, named by the breach's key
// (acted on once, so announced once).
func (b Breach) Event(run Run, at time.Time) (webhooks.Event, error) {
	return webhooks.NewEvent(run.OrgID, run.ExperimentID, webhooks.EventGuardrailBreached, at,
		BreachData{Breach: b, WorkflowID: run.WorkflowID}, b.Key)
}

// SRMData is the data of srm.failed.
type SRMData struct {
	SRMFailure
	WorkflowID string `json:"workflow_id"`
}

// Event is the srm.failed announcing f, named by its key (once per
// experiment version).
func (f SRMFailure) Event(run Run, at time.Time) (webhooks.Event, error) {
	return webhooks.NewEvent(run.OrgID, run.ExperimentID, webhooks.EventSRMFailed, at,
		SRMData{SRMFailure: f, WorkflowID: run.WorkflowID}, f.Key)
}

// HealthRunName names the hourly health check at instant at in breaches,
// audit entries and events (computed_for of an analysis nobody publishes).
func HealthRunName(at time.Time) string {
	return "health-" + at.UTC().Format(time.RFC3339)
}
