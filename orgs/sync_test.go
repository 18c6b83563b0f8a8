package orgs_test

import (
	"context"
	"testing"

	"gorm.io/gorm"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/orgs"
)

var ctx = context.Background()

func mustApply(t *testing.T, want bool, applied bool, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if applied != want {
		t.Fatalf("applied = %v, want %v", applied, want)
	}
}

func user(t *testing.T, db *gorm.DB, clerkID string) orgs.User {
	t.Helper()
	var u orgs.User
	if err := db.Where("clerk_user_id = ?", clerkID).Take(&u).Error; err != nil {
		t.Fatalf("user %s: %v", clerkID, err)
	}
	return u
}

func org(t *testing.T, db *gorm.DB, clerkID string) orgs.Org {
	t.Helper()
	var o orgs.Org
	if err := db.Where("clerk_org_id = ?", clerkID).Take(&o).Error; err != nil {
		t.Fatalf("org %s: %v", clerkID, err)
	}
	return o
}

func membership(t *testing.T, db *gorm.DB, o orgs.Org, u orgs.User) orgs.Membership {
	t.Helper()
	var ms []orgs.Membership
	if err := db.Where("org_id = ? AND user_id = ?", o.ID, u.ID).Find(&ms).Error; err != nil || len(ms) != 1 {
		t.Fatalf("memberships of %s in %s: %v, %v", u.ClerkUserID, o.ID, ms, err)
	}
	return ms[0]
}

func TestUserCreateUpdateDeleteInAnyOrder(t *testing.T) {
	db := testenv.DB(t)
	v1 := orgs.UserData{ClerkUserID: "user_1", Email: "a@example.com", FirstName: "Ada"}
	v2 := orgs.UserData{ClerkUserID: "user_1", Email: "ada@example.com", FirstName: "Ada", LastName: "L"}

	// The update arrives before the create: the create is then stale.
	applied, err := orgs.UpsertUser(ctx, db, v2, 2000)
	mustApply(t, true, applied, err)
	applied, err = orgs.UpsertUser(ctx, db, v1, 1000)
	mustApply(t, false, applied, err)
	applied, err = orgs.UpsertUser(ctx, db, v2, 2000) // replay
	mustApply(t, false, applied, err)
	if u := user(t, db, "user_1"); u.Email != "ada@example.com" || u.LastName != "L" || u.DeletedAt != nil {
		t.Fatalf("user after update-then-create: %+v", u)
	}

	applied, err = orgs.DeleteUser(ctx, db, "user_1", 3000)
	mustApply(t, true, applied, err)
	// A late update, even one claiming a newer time, does not bring a deleted user back.
	applied, err = orgs.UpsertUser(ctx, db, orgs.UserData{ClerkUserID: "user_1", Email: "late@example.com"}, 4000)
	mustApply(t, false, applied, err)
	if u := user(t, db, "user_1"); u.DeletedAt == nil || u.Email != "ada@example.com" {
		t.Fatalf("user after delete and late update: %+v", u)
	}
	var n int64
	db.Model(&orgs.User{}).Where("clerk_user_id = ?", "user_1").Count(&n)
	if n != 1 {
		t.Fatalf("%d rows for one user", n)
	}
}

func TestDeleteBeforeCreateLeavesATombstone(t *testing.T) {
	db := testenv.DB(t)
	applied, err := orgs.DeleteOrg(ctx, db, "org_gone", 5000)
	mustApply(t, true, applied, err)
	applied, err = orgs.UpsertOrg(ctx, db, orgs.OrgData{ClerkOrgID: "org_gone", Name: "Gone", Slug: "gone"}, 1000)
	mustApply(t, false, applied, err)
	if o := org(t, db, "org_gone"); o.DeletedAt == nil || o.Name == "Gone" {
		t.Fatalf("org after delete-then-create: %+v", o)
	}
	if _, err := orgs.Ensure(ctx, db, "org_gone", "gone"); err != orgs.ErrDeleted {
		t.Fatalf("Ensure of a deleted org: %v", err)
	}
}

func TestWebhookAndTokenResolveToOneOrg(t *testing.T) {
	db := testenv.DB(t)
	// Token first: the org row is made from the claims, then enriched.
	fromToken, err := orgs.Ensure(ctx, db, "org_tok", "tok-slug")
	if err != nil {
		t.Fatal(err)
	}
	applied, err := orgs.UpsertOrg(ctx, db, orgs.OrgData{ClerkOrgID: "org_tok", Name: "Token Org", Slug: "tok"}, 1000)
	mustApply(t, true, applied, err)
	if o := org(t, db, "org_tok"); o.ID != fromToken.ID || o.Name != "Token Org" || o.Slug != "tok" {
		t.Fatalf("enriched org %+v, token org id %s", o, fromToken.ID)
	}

	// Webhook first: the token finds the synced row.
	applied, err = orgs.UpsertOrg(ctx, db, orgs.OrgData{ClerkOrgID: "org_hook", Name: "Hook Org", Slug: "hook"}, 1000)
	mustApply(t, true, applied, err)
	fromHook, err := orgs.Ensure(ctx, db, "org_hook", "other-slug")
	if err != nil {
		t.Fatal(err)
	}
	if o := org(t, db, "org_hook"); fromHook.ID != o.ID || o.Name != "Hook Org" {
		t.Fatalf("token resolved %s, synced org %+v", fromHook.ID, o)
	}
}

func TestMembershipBeforeItsOrgAndUser(t *testing.T) {
	db := testenv.DB(t)
	m := orgs.MembershipData{ClerkMembershipID: "orgmem_1", ClerkOrgID: "org_m", ClerkUserID: "user_m", Role: "org:member"}
	applied, err := orgs.UpsertMembership(ctx, db, m, 3000)
	mustApply(t, true, applied, err)
	// Then the org and user arrive and fill in the placeholders.
	applied, err = orgs.UpsertOrg(ctx, db, orgs.OrgData{ClerkOrgID: "org_m", Name: "M Org", Slug: "m"}, 1000)
	mustApply(t, true, applied, err)
	applied, err = orgs.UpsertUser(ctx, db, orgs.UserData{ClerkUserID: "user_m", Email: "m@example.com"}, 1000)
	mustApply(t, true, applied, err)

	o, u := org(t, db, "org_m"), user(t, db, "user_m")
	if o.Name != "M Org" || u.Email != "m@example.com" {
		t.Fatalf("placeholders not filled: %+v %+v", o, u)
	}
	got := membership(t, db, o, u)
	if got.Role != "org:member" || got.ClerkMembershipID == nil || *got.ClerkMembershipID != "orgmem_1" {
		t.Fatalf("membership %+v", got)
	}

	// Promotion, then a stale replay of the create.
	m.Role = "org:admin"
	applied, err = orgs.UpsertMembership(ctx, db, m, 4000)
	mustApply(t, true, applied, err)
	m.Role = "org:member"
	applied, err = orgs.UpsertMembership(ctx, db, m, 3000)
	mustApply(t, false, applied, err)
	if got := membership(t, db, o, u); got.Role != "org:admin" {
		t.Fatalf("role %q after stale replay", got.Role)
	}
}

func TestMembershipLeaveRejoinAndDeletedParents(t *testing.T) {
	db := testenv.DB(t)
	first := orgs.MembershipData{ClerkMembershipID: "orgmem_a", ClerkOrgID: "org_r", ClerkUserID: "user_r", Role: "org:member"}
	second := orgs.MembershipData{ClerkMembershipID: "orgmem_b", ClerkOrgID: "org_r", ClerkUserID: "user_r", Role: "org:admin"}
	for _, step := range []struct {
		apply func() (bool, error)
		want  bool
	}{
		{func() (bool, error) { return orgs.UpsertMembership(ctx, db, first, 1000) }, true},
		{func() (bool, error) { return orgs.DeleteMembership(ctx, db, first, 2000) }, true},
		{func() (bool, error) { return orgs.UpsertMembership(ctx, db, second, 3000) }, true},
		// The first membership's deletion delivered again, late: older than the rejoin.
		{func() (bool, error) { return orgs.DeleteMembership(ctx, db, first, 2000) }, false},
	} {
		applied, err := step.apply()
		mustApply(t, step.want, applied, err)
	}
	o, u := org(t, db, "org_r"), user(t, db, "user_r")
	if got := membership(t, db, o, u); got.DeletedAt != nil || got.Role != "org:admin" || *got.ClerkMembershipID != "orgmem_b" {
		t.Fatalf("membership after rejoin %+v", got)
	}

	applied, err := orgs.DeleteUser(ctx, db, "user_r", 5000)
	mustApply(t, true, applied, err)
	if got := membership(t, db, o, u); got.DeletedAt == nil {
		t.Fatal("membership of a deleted user still live")
	}
	applied, err = orgs.UpsertMembership(ctx, db, second, 6000)
	mustApply(t, false, applied, err)
	if got := membership(t, db, o, u); got.DeletedAt == nil {
		t.Fatal("membership of a deleted user came back")
	}

	if _, err := orgs.UpsertMembership(ctx, db, orgs.MembershipData{ClerkMembershipID: "orgmem_x"}, 1); err == nil {
		t.Fatal("membership without org and user accepted")
	}
}

func TestDeleteOrgEndsItsMemberships(t *testing.T) {
	db := testenv.DB(t)
	m := orgs.MembershipData{ClerkMembershipID: "orgmem_d", ClerkOrgID: "org_d", ClerkUserID: "user_d", Role: "org:admin"}
	applied, err := orgs.UpsertMembership(ctx, db, m, 1000)
	mustApply(t, true, applied, err)
	applied, err = orgs.DeleteOrg(ctx, db, "org_d", 2000)
	mustApply(t, true, applied, err)
	applied, err = orgs.DeleteOrg(ctx, db, "org_d", 2000) // replay
	mustApply(t, false, applied, err)
	o, u := org(t, db, "org_d"), user(t, db, "user_d")
	if got := membership(t, db, o, u); got.DeletedAt == nil || o.DeletedAt == nil || u.DeletedAt != nil {
		t.Fatalf("after org delete: org %+v user %+v membership %+v", o, u, got)
	}
}
