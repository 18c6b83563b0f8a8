// Package orgs maps identity-provider organizations, users and memberships
// onto expd's own rows (internal UUIDs, clerk_ reference columns). Both the
// JWT path (an org seen first in a token) and the identity webhook sync
// write through these upserts, so the two always agree on one org row.
package orgs

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"
)

// ErrDeleted is returned for an org the identity provider has deleted.
var ErrDeleted = errors.New("organization has been deleted")

// Ensure returns the org with this identity-provider id, creating it (free
// plan, slug from the token) when no webhook has created it yet. The
// webhook sync later fills in its name.
func Ensure(ctx context.Context, db *gorm.DB, clerkOrgID, slug string) (Org, error) {
	org, err := orgRow(db.WithContext(ctx), clerkOrgID, slug)
	if err == nil && org.DeletedAt != nil {
		return org, ErrDeleted
	}
	return org, err
}

// Get returns an org by internal id.
func Get(ctx context.Context, db *gorm.DB, id string) (Org, error) {
	var org Org
	if err := db.WithContext(ctx).Where("id = ?", id).Take(&org).Error; err != nil {
		return org, fmt.Errorf("get org %s: %w", id, err)
	}
	return org, nil
}

// Page returns up to limit orgs (id and plan only) by id, after afterID
// ("" from the start), deleted orgs included: their data expires too.
func Page(ctx context.Context, db *gorm.DB, afterID string, limit int) ([]Org, error) {
	var rows []Org
	q := db.WithContext(ctx).Select("id", "plan")
	if afterID != "" { // "" is no UUID, so PostgreSQL cannot compare with it
		q = q.Where("id > ?", afterID)
	}
	if err := q.Order("id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list orgs: %w", err)
	}
	return rows, nil
}

// Plans returns the orgs among ids (id and plan only), deleted orgs
// included; ids without a row are left out.
func Plans(ctx context.Context, db *gorm.DB, ids []string) ([]Org, error) {
	var rows []Org
	if err := db.WithContext(ctx).Select("id", "plan").Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("plans of orgs: %w", err)
	}
	return rows, nil
}
