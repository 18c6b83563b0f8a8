package orgs

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"
)

// IdentityChange is one identity-provider event about exactly one of a
// user, an org or a membership.
type IdentityChange struct {
	Deleted    bool
	At         int64 // the provider's time of the change, Unix ms
	User       *UserData
	Org        *OrgData
	Membership *MembershipData
}

// ErrIncompleteChange is returned for a change that names no user, org or
// membership, or lacks the identity-provider ids it needs.
var ErrIncompleteChange = errors.New("incomplete identity change")

// ErrConflictingChange is returned for a change that contradicts the store
// in a way no retry can fix: a membership id already held by another org
// and user pair.
var ErrConflictingChange = errors.New("conflicting identity change")

// ApplyIdentityChange applies ch and tells whether it changed the store
// (false: older than what is stored, or a replay).
func ApplyIdentityChange(ctx context.Context, db *gorm.DB, ch IdentityChange) (bool, error) {
	if err := ch.validate(); err != nil {
		return false, err
	}
	switch {
	case ch.User != nil && ch.Deleted:
		return DeleteUser(ctx, db, ch.User.ClerkUserID, ch.At)
	case ch.User != nil:
		return UpsertUser(ctx, db, *ch.User, ch.At)
	case ch.Org != nil && ch.Deleted:
		return DeleteOrg(ctx, db, ch.Org.ClerkOrgID, ch.At)
	case ch.Org != nil:
		return UpsertOrg(ctx, db, *ch.Org, ch.At)
	case ch.Membership != nil && ch.Deleted:
		return DeleteMembership(ctx, db, *ch.Membership, ch.At)
	case ch.Membership != nil:
		return UpsertMembership(ctx, db, *ch.Membership, ch.At)
	}
	return false, fmt.Errorf("%w: names no user, org or membership", ErrIncompleteChange)
}
