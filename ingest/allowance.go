package ingest

import (
	"context"
	"slices"

	"github.com/expd/expd/plans"
	"github.com/expd/expd/scores"
)

// admit decides, under the usage rows' locks, which requests of the group
// fit their org's monthly allowance. A request that does not fit is
// refused whole (its AllowanceError in the returned slice); duplicates
// are free, so only events and scores not stored yet count against the
// allowance (a score replacing a stored one is not new).
func admit(ctx context.Context, tx groupTx, month string, group []*request, owned [][]EventRow, sc groupScores) ([]error, error) {
	refusals := make([]error, len(group))
	candidates := make(map[string]int64) // org -> rows that may be new
	for i, r := range group {
		if r.batch.Tenant.Allowance() != plans.Unlimited {
			candidates[r.batch.Tenant.OrgID] += int64(len(owned[i]) + len(sc.mine[i]))
		}
	}
	if len(candidates) == 0 {
		return refusals, nil
	}
	orgs := make([]string, 0, len(candidates))
	for org := range candidates {
		orgs = append(orgs, org)
	}
	slices.Sort(orgs)
	used, err := tx.lockUsage(ctx, month, orgs)
	if err != nil {
		return nil, err
	}
	for _, org := range orgs {
		if fitsAll(group, org, used[org]+candidates[org]) {
			continue
		}
		// Near the limit: count exactly which rows are new.
		if err := admitExactly(ctx, tx, month, group, owned, sc, org, used[org], refusals); err != nil {
			return nil, err
		}
	}
	return refusals, nil
}

func fitsAll(group []*request, org string, total int64) bool {
	for _, r := range group {
		limit := r.batch.Tenant.Allowance()
		if r.batch.Tenant.OrgID == org && limit != plans.Unlimited && total > limit {
			return false
		}
	}
	return true
}

func admitExactly(ctx context.Context, tx groupTx, month string, group []*request, owned [][]EventRow, sc groupScores, org string, used int64, refusals []error) error {
	var ids []string
	var orgScores []scores.Row
	for i, r := range group {
		if r.batch.Tenant.OrgID == org {
			for j := range owned[i] {
				ids = append(ids, owned[i][j].EventID)
			}
			orgScores = append(orgScores, sc.mine[i]...)
		}
	}
	stored, err := tx.existing(ctx, org, ids)
	if err != nil {
		return err
	}
	scored, err := tx.existingScores(ctx, orgScores)
	if err != nil {
		return err
	}
	for i, r := range group {
		if r.batch.Tenant.OrgID != org {
			continue
		}
		var fresh int64
		for j := range owned[i] {
			if !stored[owned[i][j].EventID] {
				fresh++
			}
		}
		for j := range sc.mine[i] {
			if !scored[scores.KeyOf(&sc.mine[i][j])] {
				fresh++
			}
		}
		t := r.batch.Tenant
		if t.Allowance() != plans.Unlimited && fresh > 0 && used+fresh > t.Allowance() {
			refusals[i] = &AllowanceError{Plan: t.Plan, Allowance: t.Allowance(), Used: used, Adding: fresh, Month: month}
			continue
		}
		used += fresh
	}
	return nil
}
