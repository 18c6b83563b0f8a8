package ingest

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/erasure"
	"github.com/expd/expd/secrets"
)

// ErasedFilter drops the events of users whose erasure was requested
// within erasure.TombstoneTTL (docs/privacy.md, "Events that arrive after
// an erasure"): the writer's check of every batch before it is written,
// and the spool's again before a shipment, so that an event acknowledged
// before an erasure and shipped after its deletion is not stored. Each
// org's tombstones are cached (erasure.Tombstones) and read again once
// older than erasure.TombstoneMaxAge or when an erasure of the org was
// made in this process since.
type ErasedFilter struct {
	ring  *secrets.Keyring
	now   func() time.Time
	load  erasure.Loader // Drop's; the writer passes its own per call
	cache erasure.Tombstones
}

// NewErasedFilter is a filter reading the orgs' tombstones from db, whose
// user hashes are ring's; with ring unconfigured it drops nothing.
func NewErasedFilter(db *gorm.DB, ring *secrets.Keyring) *ErasedFilter {
	return &ErasedFilter{ring: ring, now: time.Now, load: func(ctx context.Context, orgID string, since time.Time) ([]erasure.Tombstone, error) {
		return erasure.Recent(ctx, db, orgID, since)
	}}
}

// Drop is rows (of any orgs) without the events of erased users, each
// org's in order, and how many it dropped. A nil filter drops nothing.
func (f *ErasedFilter) Drop(ctx context.Context, rows []EventRow) ([]EventRow, int, error) {
	if f == nil || !f.ring.Configured() || len(rows) == 0 {
		return rows, 0, nil
	}
	byOrg := map[string][]EventRow{}
	var orgs []string
	for _, r := range rows {
		if _, ok := byOrg[r.OrgID]; !ok {
			orgs = append(orgs, r.OrgID)
		}
		byOrg[r.OrgID] = append(byOrg[r.OrgID], r)
	}
	if len(orgs) == 1 {
		return f.drop(ctx, f.load, orgs[0], rows)
	}
	kept, dropped := make([]EventRow, 0, len(rows)), 0
	for _, org := range orgs {
		k, n, err := f.drop(ctx, f.load, org, byOrg[org])
		if err != nil {
			return nil, 0, err
		}
		kept, dropped = append(kept, k...), dropped+n
	}
	return kept, dropped, nil
}

// drop removes from rows, of one org, the events of its erased users,
// reading the org's tombstones through load when its cached set is
// stale, and returns how many it removed.
func (f *ErasedFilter) drop(ctx context.Context, load erasure.Loader, orgID string, rows []EventRow) ([]EventRow, int, error) {
	if !f.ring.Configured() || len(rows) == 0 {
		return rows, 0, nil
	}
	seen := map[string]bool{}
	var users []string
	for _, r := range rows {
		if !seen[r.UserID] {
			seen[r.UserID] = true
			users = append(users, r.UserID)
		}
	}
	gone, err := f.cache.Erased(ctx, f.ring, orgID, users, f.now(), load)
	if err != nil || len(gone) == 0 {
		return rows, 0, err
	}
	kept := make([]EventRow, 0, len(rows))
	for _, r := range rows {
		if !gone[r.UserID] {
			kept = append(kept, r)
		}
	}
	return kept, len(rows) - len(kept), nil
}
