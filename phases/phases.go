// Package phases tells an experiment's phases (docs/results.md,
// "Phases"): the spans of its life under one allocation and one set of
// holdout shares. The experiment's versions give the allocation changes
// (experiments.AllocationPhases); the holdouts covering it give the
// instants their held-out share changed (holdouts.Shares). Both change
// who enters the experiment, so each starts a phase.
package phases

import (
	"context"
	"maps"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/holdouts"
)

// Of returns the phases of the org's experiment idOrName that overlap
// [from, to), cut to it, oldest first, numbered over the experiment's
// whole life.
func Of(ctx context.Context, db *gorm.DB, orgID, idOrName string, from, to time.Time) ([]experiments.Phase, error) {
	layer, all, err := experiments.Store{DB: db}.AllocationPhases(ctx, orgID, idOrName, to)
	if err != nil {
		return nil, err
	}
	shares, err := holdouts.Store{DB: db}.Shares(ctx, orgID, layer, to)
	if err != nil {
		return nil, err
	}
	return experiments.Cut(Split(all, shares), from, to), nil
}

// Split cuts the contiguous phases all (oldest first) at every instant of
// shares (oldest first) that falls strictly inside one, records in each
// phase the shares in force during it, and numbers the phases from 1.
func Split(all []experiments.Phase, shares []holdouts.Share) []experiments.Phase {
	out := make([]experiments.Phase, 0, len(all))
	inForce := map[string]float64{}
	next := 0
	// apply takes in every share at or before t.
	apply := func(t time.Time) {
		for ; next < len(shares) && !shares[next].At.After(t); next++ {
			inForce[shares[next].HoldoutID] = shares[next].Percent
		}
	}
	held := func() map[string]float64 {
		if len(inForce) == 0 {
			return nil
		}
		return maps.Clone(inForce)
	}
	for _, p := range all {
		apply(p.Start)
		p.Holdouts = held()
		for next < len(shares) && shares[next].At.Before(p.End) {
			at := shares[next].At
			piece := p
			piece.End = at
			out = append(out, piece)
			apply(at)
			p.Start, p.Holdouts = at, held()
		}
		out = append(out, p)
	}
	for i := range out {
		out[i].Number = i + 1
	}
	return out
}
