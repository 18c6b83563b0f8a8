package results

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/holdouts"
	"github.com/expd/expd/metrics"
)

// LoadHoldoutDesign assembles what a run of a holdout analyses
// (docs/targeting.md, "Holdout results"): its exposures (its id names
// them) split into two arms, holdout (the control, the reference) and
// exposed, weighted by its held-out share, with one phase per share it
// has had; its metrics over every experiment's events of each user
// (Window.AllExperiments), from its creation to windowEnd, cut to the
// retention like an experiment's. Version is its number of shares.
func LoadHoldoutDesign(ctx context.Context, db *gorm.DB, orgID, holdoutID string, windowEnd time.Time) (Planned, error) {
	h, err := holdouts.Store{DB: db}.Get(ctx, orgID, holdoutID)
	switch {
	case errors.Is(err, holdouts.ErrNotFound):
		return Planned{Skip: "holdout not found"}, nil
	case err != nil:
		return Planned{}, err
	}
	shares, err := holdouts.Store{DB: db}.SharesOf(ctx, orgID, holdoutID, windowEnd)
	if err != nil {
		return Planned{}, err
	}
	if len(shares) == 0 {
		return Planned{Skip: SkipNotCreated}, nil
	}
	limits, retention, err := orgLimits(ctx, db, orgID)
	if err != nil {
		return Planned{}, err
	}
	resolved, err := metrics.Resolve(ctx, metrics.Store{DB: db}, orgID, h.Metrics)
	if err != nil {
		return Planned{}, err
	}
	d := Design{OrgID: orgID, ExperimentID: h.ID, Control: bucketing.HoldoutHeld,
		Allocation: holdoutAllocation(shares[len(shares)-1].Percent), Metrics: resolved,
		Window: NewWindow(h.CreatedAt, windowEnd, retention), Limits: limits,
		// Looked at again and again over months: always-valid numbers.
		Sequential: true}
	d.Window.AllExperiments = true
	all := make([]experiments.Phase, len(shares))
	for i, sh := range shares {
		end := windowEnd
		if i+1 < len(shares) {
			end = shares[i+1].At
		}
		alloc := holdoutAllocation(sh.Percent)
		all[i] = experiments.Phase{Number: i + 1, Start: sh.At, End: end, Version: i + 1, Allocation: alloc,
			Weights: map[string]float64{alloc[0].Variant: alloc[0].Weight, alloc[1].Variant: alloc[1].Weight}}
	}
	d.Phases = experiments.Cut(all, d.Window.Start, d.Window.End)
	return Planned{Version: len(shares), Design: d}, nil
}

// holdoutAllocation is a holdout's two arms at a held-out share of
// percent: the held-out users first, as an experiment's control.
func holdoutAllocation(percent float64) []bucketing.Slice {
	return []bucketing.Slice{{Variant: bucketing.HoldoutHeld, Weight: percent}, {Variant: bucketing.HoldoutExposed, Weight: 100 - percent}}
}
