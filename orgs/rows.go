package orgs

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Both the JWT path and the webhook sync may be first to see an org or a
// user, so each creates a bare row keyed by the identity provider's id and
// the other side fills it in. Inserts ignore conflicts: of two racing
// first sightings, one row wins and both read it.

// orgRow returns the org row of an identity-provider org, creating a bare
// one (free plan, named by its slug) when there is none. Deleted orgs are
// returned as they are.
func orgRow(tx *gorm.DB, clerkOrgID, slug string) (Org, error) {
	var org Org
	err := tx.Where("clerk_org_id = ?", clerkOrgID).Take(&org).Error
	if err == nil || !errors.Is(err, gorm.ErrRecordNotFound) {
		return org, wrap("find org", err)
	}
	now := time.Now().UTC()
	id := clerkOrgID
	org = Org{ID: uuid.NewString(), ClerkOrgID: &id, Slug: slug, Name: slug, Plan: "free", CreatedAt: now, UpdatedAt: now}
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&org).Error; err != nil {
		return org, fmt.Errorf("create org: %w", err)
	}
	return org, wrap("read created org", tx.Where("clerk_org_id = ?", clerkOrgID).Take(&org).Error)
}

// userRow is orgRow for users.
func userRow(tx *gorm.DB, clerkUserID string) (User, error) {
	var user User
	err := tx.Where("clerk_user_id = ?", clerkUserID).Take(&user).Error
	if err == nil || !errors.Is(err, gorm.ErrRecordNotFound) {
		return user, wrap("find user", err)
	}
	now := time.Now().UTC()
	user = User{ID: uuid.NewString(), ClerkUserID: clerkUserID, CreatedAt: now, UpdatedAt: now}
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&user).Error; err != nil {
		return user, fmt.Errorf("create user: %w", err)
	}
	return user, wrap("read created user", tx.Where("clerk_user_id = ?", clerkUserID).Take(&user).Error)
}

// membershipRow is orgRow for the one membership row of an (org, user)
// pair; a user who leaves and rejoins gets the same row back.
func membershipRow(tx *gorm.DB, orgID, userID string) error {
	now := time.Now().UTC()
	m := Membership{ID: uuid.NewString(), OrgID: orgID, UserID: userID, CreatedAt: now, UpdatedAt: now}
	return wrap("create membership", tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&m).Error)
}

func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
