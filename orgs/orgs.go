// Package orgs maps identity-provider organizations, users and memberships
// onto expd's own rows (internal UUIDs, clerk_ reference columns). Both the
// JWT path (an org seen first in a token) and the identity webhook sync
// write through these upserts, so the two always agree on one org row.
package orgs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/expd/expd/models"
)

// ErrDeleted is returned for an org the identity provider has deleted.
var ErrDeleted = errors.New("organization has been deleted")

// Ensure returns the org with this identity-provider id, creating it (free
// plan, slug from the token) when no webhook has created it yet. The
// webhook sync later fills in its name.
func Ensure(ctx context.Context, db *gorm.DB, clerkOrgID, slug string) (models.Org, error) {
	var org models.Org
	err := db.WithContext(ctx).Where("clerk_org_id = ?", clerkOrgID).Take(&org).Error
	if err == nil {
		if org.DeletedAt != nil {
			return org, ErrDeleted
		}
		return org, nil
	}
	if !errors.Is(err, gorm.ErrRecordNotFound) {
		return org, fmt.Errorf("find org: %w", err)
	}
	now := time.Now().UTC()
	id := clerkOrgID
	org = models.Org{ID: uuid.NewString(), ClerkOrgID: &id, Slug: slug, Name: slug, Plan: "free", CreatedAt: now, UpdatedAt: now}
	// Two first requests may race: the unique clerk_org_id lets one insert
	// win and the other read the winner.
	if err := db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&org).Error; err != nil {
		return org, fmt.Errorf("create org: %w", err)
	}
	if err := db.WithContext(ctx).Where("clerk_org_id = ?", clerkOrgID).Take(&org).Error; err != nil {
		return org, fmt.Errorf("read created org: %w", err)
	}
	return org, nil
}

// Get returns an org by internal id.
func Get(ctx context.Context, db *gorm.DB, id string) (models.Org, error) {
	var org models.Org
	if err := db.WithContext(ctx).Where("id = ?", id).Take(&org).Error; err != nil {
		return org, fmt.Errorf("get org %s: %w", id, err)
	}
	return org, nil
}
