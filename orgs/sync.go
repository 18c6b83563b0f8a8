package orgs

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// The identity webhook may deliver changes late, twice or out of order.
// Every change carries the provider's time (Unix ms): a row keeps the time
// of the last change applied (clerk_changed_ms), and an older change is
// skipped, so the newest state wins whatever the delivery order. Deletes
// are soft (deleted_at), win ties, and are final for users and orgs; a
// change to something not seen yet creates it, and a membership creates
// bare rows for its org and user until their own events arrive.

// UserData is a user as the identity provider describes it.
type UserData struct {
	ClerkUserID string
	Email       string
	FirstName   string
	LastName    string
}

// OrgData is an organization as the identity provider describes it.
type OrgData struct {
	ClerkOrgID string
	Name       string
	Slug       string
}

// MembershipData ties a user to an org with a role such as "org:admin".
type MembershipData struct {
	ClerkMembershipID string
	ClerkOrgID        string
	ClerkUserID       string
	Role              string
}

// UpsertUser applies a user's created or updated state of time at (Unix
// ms) and tells whether it was newer than what the row holds.
func UpsertUser(ctx context.Context, db *gorm.DB, u UserData, at int64) (bool, error) {
	return inTx(ctx, db, func(tx *gorm.DB) (bool, error) {
		if _, err := userRow(tx, u.ClerkUserID); err != nil {
			return false, err
		}
		return applyIfNewer(liveUser(tx, u.ClerkUserID), at, false, map[string]any{
			"email": u.Email, "first_name": u.FirstName, "last_name": u.LastName,
		})
	})
}

// DeleteUser soft-deletes a user and its memberships.
func DeleteUser(ctx context.Context, db *gorm.DB, clerkUserID string, at int64) (bool, error) {
	return inTx(ctx, db, func(tx *gorm.DB) (bool, error) {
		user, err := userRow(tx, clerkUserID)
		if err != nil {
			return false, err
		}
		applied, err := applyIfNewer(liveUser(tx, clerkUserID), at, true, map[string]any{"deleted_at": msTime(at)})
		if err != nil || !applied {
			return applied, err
		}
		return true, endMemberships(tx, "user_id = ?", user.ID, at)
	})
}

// UpsertOrg applies an org's created or updated state of time at.
func UpsertOrg(ctx context.Context, db *gorm.DB, o OrgData, at int64) (bool, error) {
	return inTx(ctx, db, func(tx *gorm.DB) (bool, error) {
		if _, err := orgRow(tx, o.ClerkOrgID, o.Slug); err != nil {
			return false, err
		}
		return applyIfNewer(liveOrg(tx, o.ClerkOrgID), at, false, map[string]any{
			"name": o.Name, "slug": o.Slug,
		})
	})
}

// DeleteOrg soft-deletes an org and its memberships. Its experiments, keys
// and events stay; session tokens naming it are refused from now on.
func DeleteOrg(ctx context.Context, db *gorm.DB, clerkOrgID string, at int64) (bool, error) {
	return inTx(ctx, db, func(tx *gorm.DB) (bool, error) {
		org, err := orgRow(tx, clerkOrgID, "")
		if err != nil {
			return false, err
		}
		applied, err := applyIfNewer(liveOrg(tx, clerkOrgID), at, true, map[string]any{"deleted_at": msTime(at)})
		if err != nil || !applied {
			return applied, err
		}
		return true, endMemberships(tx, "org_id = ?", org.ID, at)
	})
}

// UpsertMembership applies a membership's created or updated state of
// time at. Memberships of deleted users or orgs stay ended.
func UpsertMembership(ctx context.Context, db *gorm.DB, m MembershipData, at int64) (bool, error) {
	return changeMembership(ctx, db, m, at, false, map[string]any{
		"role": m.Role, "clerk_membership_id": m.ClerkMembershipID, "deleted_at": nil,
	})
}

// DeleteMembership soft-deletes a membership.
func DeleteMembership(ctx context.Context, db *gorm.DB, m MembershipData, at int64) (bool, error) {
	return changeMembership(ctx, db, m, at, true, map[string]any{"deleted_at": msTime(at)})
}

func changeMembership(ctx context.Context, db *gorm.DB, m MembershipData, at int64, isDelete bool, set map[string]any) (bool, error) {
	partial := m.ClerkOrgID == "" || m.ClerkUserID == ""
	if partial && !isDelete {
		return false, fmt.Errorf("%w: membership names no org or no user", ErrIncompleteChange)
	}
	return inTx(ctx, db, func(tx *gorm.DB) (bool, error) {
		if partial {
			// A delete that names only the membership: end the row that
			// holds it, if any.
			return applyIfNewer(tx.Model(&Membership{}).Where("clerk_membership_id = ?", m.ClerkMembershipID), at, isDelete, set)
		}
		org, err := orgRow(tx, m.ClerkOrgID, "")
		if err != nil {
			return false, err
		}
		user, err := userRow(tx, m.ClerkUserID)
		if err != nil {
			return false, err
		}
		if !isDelete && (org.DeletedAt != nil || user.DeletedAt != nil) {
			return false, nil
		}
		if err := membershipIDFree(tx, m.ClerkMembershipID, org.ID, user.ID); err != nil {
			return false, err
		}
		if err := membershipRow(tx, org.ID, user.ID); err != nil {
			return false, err
		}
		return applyIfNewer(tx.Model(&Membership{}).Where("org_id = ? AND user_id = ?", org.ID, user.ID), at, isDelete, set)
	})
}

// membershipIDFree refuses a membership id that another (org, user) pair
// already holds: the provider never reuses one, and the unique column
// would refuse it on every retry.
func membershipIDFree(tx *gorm.DB, clerkMembershipID, orgID, userID string) error {
	if clerkMembershipID == "" {
		return nil
	}
	var n int64
	err := tx.Model(&Membership{}).Where("clerk_membership_id = ? AND NOT (org_id = ? AND user_id = ?)", clerkMembershipID, orgID, userID).Count(&n).Error
	if err != nil {
		return wrap("check membership id", err)
	}
	if n > 0 {
		return fmt.Errorf("%w: membership id %q belongs to another org or user", ErrConflictingChange, clerkMembershipID)
	}
	return nil
}

// applyIfNewer updates the rows of rows when the change at is newer than
// their last one; ties go to deletes (tieWins), so a delete and an update
// of the same instant end deleted.
func applyIfNewer(rows *gorm.DB, at int64, tieWins bool, set map[string]any) (bool, error) {
	older := "clerk_changed_ms IS NULL OR clerk_changed_ms < ?"
	if tieWins {
		older = "clerk_changed_ms IS NULL OR clerk_changed_ms <= ?"
	}
	set["clerk_changed_ms"] = at
	set["updated_at"] = time.Now().UTC()
	res := rows.Where(older, at).Updates(set)
	if res.Error != nil {
		return false, fmt.Errorf("apply identity change: %w", res.Error)
	}
	return res.RowsAffected > 0, nil
}

// Users and orgs that are not deleted: deletes are final for them.
func liveUser(tx *gorm.DB, clerkUserID string) *gorm.DB {
	return tx.Model(&User{}).Where("clerk_user_id = ? AND deleted_at IS NULL", clerkUserID)
}

func liveOrg(tx *gorm.DB, clerkOrgID string) *gorm.DB {
	return tx.Model(&Org{}).Where("clerk_org_id = ? AND deleted_at IS NULL", clerkOrgID)
}

// endMemberships soft-deletes the live memberships of a deleted user or org.
func endMemberships(tx *gorm.DB, where, id string, at int64) error {
	err := tx.Model(&Membership{}).Where(where+" AND deleted_at IS NULL", id).
		Updates(map[string]any{"deleted_at": msTime(at), "updated_at": time.Now().UTC()}).Error
	return wrap("end memberships", err)
}

func inTx(ctx context.Context, db *gorm.DB, fn func(tx *gorm.DB) (bool, error)) (bool, error) {
	var applied bool
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		applied, err = fn(tx)
		return err
	})
	return applied, err
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
