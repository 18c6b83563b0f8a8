package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/expd/expd/results"
	"github.com/expd/expd/verdict"
)

// VerdictResult is what the run's results.ready announces of its verdict:
// the recommendation and its reasons (the arms stay on the run).
type VerdictResult struct {
	Recommendation string           `json:"recommendation"`
	Variant        string           `json:"variant,omitempty"`
	Reasons        []verdict.Reason `json:"reasons"`
	DaysToMDE      *float64         `json:"days_to_mde"`
}

// DecideVerdict decides a published run's verdict (verdict.Decide) and
// stores it on the run. Idempotent: the same rows give the same verdict.
// A run that no longer exists has none.
func (a *Activities) DecideVerdict(ctx context.Context, in RunInput) (VerdictResult, error) {
	run, err := results.LoadRun(ctx, a.DB, in.OrgID, in.ExperimentID, in.ComputedFor)
	if errors.Is(err, results.ErrRunNotFound) {
		return VerdictResult{}, nil
	}
	if err != nil {
		return VerdictResult{}, err
	}
	rows, err := results.LoadRows(ctx, a.DB, in.OrgID, in.ExperimentID, in.ComputedFor)
	if err != nil {
		return VerdictResult{}, err
	}
	vin, err := verdict.Load(ctx, a.DB, run, rows)
	if err != nil {
		return VerdictResult{}, err
	}
	v := verdict.Decide(vin)
	b, err := json.Marshal(v)
	if err != nil {
		return VerdictResult{}, fmt.Errorf("encode verdict: %w", err)
	}
	if err := results.SaveVerdict(ctx, a.DB, in.ExperimentID, in.ComputedFor, b); err != nil {
		return VerdictResult{}, err
	}
	return VerdictResult{Recommendation: v.Recommendation, Variant: v.Variant, Reasons: v.Reasons, DaysToMDE: v.DaysToMDE}, nil
}
