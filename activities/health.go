package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/guardrails"
	"github.com/expd/expd/results"
)

// ListHealthInput pages through the experiments of an hourly health run.
type ListHealthInput struct {
	After  ExperimentRef // zero: the first page
	Limit  int
	PerOrg int // at most this many experiments of one org per run
}

// ListHealthResult is one page, ordered by org then id; Next is the zero
// ref on the last page. Deferred (first page only) counts the running
// experiments left out by the per-org cap.
type ListHealthResult struct {
	Experiments []ExperimentRef
	Next        ExperimentRef
	Deferred    int
}

// ListHealthChecks returns one page of the running experiments the hourly
// health run checks: the PerOrg least recently checked of each org, whole
// orgs per page (Next names the page's last org).
func (a *Activities) ListHealthChecks(ctx context.Context, in ListHealthInput) (ListHealthResult, error) {
	store := experiments.Store{DB: a.DB}
	running, more, err := store.ListRunningPerOrg(ctx, in.PerOrg, in.After.OrgID, in.Limit)
	if err != nil {
		return ListHealthResult{}, err
	}
	var out ListHealthResult
	for _, r := range running {
		out.Experiments = append(out.Experiments, ExperimentRef{OrgID: r.OrgID, ID: r.ID})
	}
	if more && len(running) > 0 {
		out.Next = ExperimentRef{OrgID: running[len(running)-1].OrgID}
	}
	if in.After == (ExperimentRef{}) {
		n, err := store.CountRunningBeyond(ctx, in.PerOrg)
		if err != nil {
			return out, err
		}
		out.Deferred = int(n)
	}
	return out, nil
}

// HealthCheckInput names one experiment of an hourly health run and the
// instant its analysis window ends.
type HealthCheckInput struct {
	OrgID        string
	ExperimentID string
	At           time.Time
	WorkflowID   string
}

// CheckGuardrailHealth analyses a running experiment up to At exactly as a
// results run would (same design, aggregation and statistics) but keeps
// the rows in memory: nothing is staged or published, so the nightly and
// manual results people read are untouched and nothing needs purging. The
// guardrails and the SRM gate are then acted on like after a run
// (ActOnGuardrails), under the run name guardrails.HealthRunName(At). An
// experiment no longer running is not analysed.
func (a *Activities) CheckGuardrailHealth(ctx context.Context, in HealthCheckInput) (GuardrailsResult, error) {
	exp, err := experiments.Store{DB: a.DB}.Get(ctx, in.OrgID, in.ExperimentID)
	if errors.Is(err, experiments.ErrNotFound) {
		return GuardrailsResult{}, nil
	}
	if err != nil {
		return GuardrailsResult{}, err
	}
	if exp.Status != experiments.StatusRunning {
		return GuardrailsResult{}, nil
	}
	// Attempted counts: a check that fails moves back in the rotation too,
	// so it cannot hold a slot every hour.
	if err := (experiments.Store{DB: a.DB}).MarkHealthChecked(ctx, in.OrgID, in.ExperimentID, in.At); err != nil {
		return GuardrailsResult{}, err
	}
	p, err := results.LoadDesign(ctx, a.DB, in.OrgID, in.ExperimentID, in.At)
	if err != nil || p.Skip != "" {
		return GuardrailsResult{}, err
	}
	d := p.Design
	beat := startHeartbeat(ctx, "aggregating")
	defer beat.stop()
	sample, _, err := a.aggregator().Aggregate(ctx, in.OrgID, in.ExperimentID, d.Window, d.Arms(), d.Metrics, a.now(), func(n int) {
		beat.set(fmt.Sprintf("aggregated %d users", n))
	})
	if err != nil {
		return GuardrailsResult{}, err
	}
	analysis, err := results.Analyze(d, sample, a.now(), func(metric string) { beat.set("comparing " + metric) })
	if err != nil {
		return GuardrailsResult{}, err
	}
	name := guardrails.HealthRunName(in.At)
	for i := range analysis.Rows {
		analysis.Rows[i].ExperimentID, analysis.Rows[i].ComputedFor = in.ExperimentID, name
	}
	ref := guardrails.Run{OrgID: in.OrgID, ExperimentID: in.ExperimentID, ComputedFor: name, WorkflowID: in.WorkflowID}
	return a.actOn(ctx, ref, exp, analysis.Rows, &analysis.SRM, p.Version)
}

// actOn acts on the guardrails of exp's current rules over rows, and on
// the SRM gate (nil: not checked) of the analysis at version.
func (a *Activities) actOn(ctx context.Context, ref guardrails.Run, exp experiments.Experiment, rows []results.Row, srm *results.SRMSummary, version int) (GuardrailsResult, error) {
	var out GuardrailsResult
	var err error
	if out.Breaches, err = guardrails.Act(ctx, a.DB, ref, guardrails.Evaluate(exp.ID, exp.Config, rows), a.now()); err != nil {
		return out, err
	}
	if srm != nil {
		if out.SRM, err = guardrails.ActOnSRM(ctx, a.DB, ref, *srm, version, a.now()); err != nil {
			return out, err
		}
	}
	return out, nil
}
