package activities

import (
	"context"
	"errors"

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

// DecideVerdict decides a published run's verdict and stores it on the
// run (verdict.DecideAndStore, which the backfill of older runs calls
// too). Idempotent: the same rows give the same verdict. A run that no
// longer exists has none.
func (a *Activities) DecideVerdict(ctx context.Context, in RunInput) (VerdictResult, error) {
	run, rows, ok, err := a.publishedRun(ctx, in)
	if err != nil || !ok {
		return VerdictResult{}, err
	}
	v, err := verdict.DecideAndStore(ctx, a.DB, run, rows)
	if err != nil {
		return VerdictResult{}, err
	}
	return VerdictResult{Recommendation: v.Recommendation, Variant: v.Variant, Reasons: v.Reasons, DaysToMDE: v.DaysToMDE}, nil
}

// publishedRun loads the run a post-publication step reads and its rows;
// ok is false when the run no longer exists (the step then has nothing
// to do). The verdict and the guardrails steps both read runs this way.
func (a *Activities) publishedRun(ctx context.Context, in RunInput) (run results.Run, rows []results.Row, ok bool, err error) {
	run, err = results.LoadRun(ctx, a.DB, in.OrgID, in.ExperimentID, in.ComputedFor)
	if errors.Is(err, results.ErrRunNotFound) {
		return run, nil, false, nil
	}
	if err != nil {
		return run, nil, false, err
	}
	rows, err = results.LoadRows(ctx, a.DB, in.OrgID, in.ExperimentID, in.ComputedFor)
	if err != nil {
		return run, nil, false, err
	}
	return run, rows, true, nil
}
