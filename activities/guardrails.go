package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/guardrails"
	"github.com/expd/expd/results"
)

// GuardrailsResult is what a run's guardrail evaluation did: the breaches
// and SRM failure this run acted on (now or in a former attempt of the
// same workflow), for the workflow to announce. Breaches acted on by an
// earlier run are not listed: a breach is acted on once.
type GuardrailsResult struct {
	Breaches []guardrails.Breach
	SRM      *guardrails.SRMFailure
}

// ActOnGuardrails evaluates the experiment's current guardrail rules
// against the headline intervals of the run's published rows, records
// each breach once and applies its action (stop: the experiment is
// stopped through the lifecycle's transition path), and records a failed
// SRM gate once per experiment version.
func (a *Activities) ActOnGuardrails(ctx context.Context, in RunInput) (GuardrailsResult, error) {
	exp, err := experiments.Store{DB: a.DB}.Get(ctx, in.OrgID, in.ExperimentID)
	if errors.Is(err, experiments.ErrNotFound) {
		return GuardrailsResult{}, nil
	}
	if err != nil {
		return GuardrailsResult{}, err
	}
	run, rows, ok, err := a.publishedRun(ctx, in)
	if err != nil || !ok {
		return GuardrailsResult{}, err
	}
	ref := guardrails.Run{OrgID: in.OrgID, ExperimentID: in.ExperimentID, ComputedFor: in.ComputedFor, WorkflowID: in.WorkflowID}
	var srm *results.SRMSummary
	if len(run.SRM) > 0 {
		srm = &results.SRMSummary{}
		if err := json.Unmarshal(run.SRM, srm); err != nil {
			return GuardrailsResult{}, fmt.Errorf("decode srm of run %s: %w", in.ComputedFor, err)
		}
	}
	return a.actOn(ctx, ref, exp, rows, srm, run.ExperimentVersion)
}
