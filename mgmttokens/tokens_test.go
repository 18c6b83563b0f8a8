package mgmttokens_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"gorm.io/gorm"

	orgaudit "github.com/expd/expd/audit"
	"github.com/expd/expd/auth"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/mgmttokens"
	"github.com/expd/expd/validate"
)

var ctx = context.Background()

func newOrgs(t *testing.T) (*gorm.DB, string, string) {
	t.Helper()
	db := testenv.DB(t)
	return db, testenv.NewOrg(t, db, testenv.Signer(t)).ID, testenv.NewOrg(t, db, testenv.Signer(t)).ID
}

func count(t *testing.T, db *gorm.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.Raw(query, args...).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCreateRefusesBadInputAndWritesNothing(t *testing.T) {
	db, org, _ := newOrgs(t)
	past := time.Now().Add(-time.Minute)
	_, _, err := mgmttokens.Create(ctx, db, mgmttokens.CreateInput{OrgID: org, Name: "", Role: "owner", ExpiresAt: &past})
	fields := map[string]bool{}
	for _, f := range validate.Fields(err) {
		fields[f.Field] = true
	}
	if !fields["name"] || !fields["role"] || !fields["expires_at"] {
		t.Fatalf("bad input reported %v", err)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM management_tokens WHERE org_id = ?", org); n != 0 {
		t.Fatalf("%d tokens written", n)
	}
}

func TestAuthenticateAcceptsOnlyALiveToken(t *testing.T) {
	db, org, _ := newOrgs(t)
	tok, plain, err := mgmttokens.Create(ctx, db, mgmttokens.CreateInput{OrgID: org, Name: "ci", Role: mgmttokens.RoleAdmin, Actor: "user_1"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := mgmttokens.Authenticate(ctx, db, plain)
	if err != nil || got.ID != tok.ID || got.LastUsedAt == nil {
		t.Fatalf("authenticate: %+v, %v", got, err)
	}
	if sess := mgmttokens.Session(got); !sess.IsAdmin() || sess.UserID != mgmttokens.Actor(tok) {
		t.Fatalf("session %+v", sess)
	}
	unknown, err := auth.GenerateManagementToken()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "expd_mt_nope", unknown.Plain} {
		if _, err := mgmttokens.Authenticate(ctx, db, bad); !errors.Is(err, mgmttokens.ErrInvalid) {
			t.Fatalf("authenticate %q: %v", bad, err)
		}
	}
	// An expired token is refused, and its org told once an hour.
	if err := db.Exec("UPDATE management_tokens SET expires_at = ? WHERE id = ?", time.Now().Add(-time.Second).UTC(), tok.ID).Error; err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := mgmttokens.Authenticate(ctx, db, plain); !errors.Is(err, mgmttokens.ErrInvalid) {
			t.Fatalf("expired token: %v", err)
		}
	}
	if n := count(t, db, "SELECT COUNT(*) FROM audit_log WHERE org_id = ? AND action = ?", org, orgaudit.ManagementTokenRefused); n != 1 {
		t.Fatalf("%d refusals audited, want 1", n)
	}
}

func TestRevokedTokenAndDeletedOrgAreRefused(t *testing.T) {
	db, org, other := newOrgs(t)
	tok, plain, err := mgmttokens.Create(ctx, db, mgmttokens.CreateInput{OrgID: org, Name: "ci", Role: mgmttokens.RoleMember})
	if err != nil {
		t.Fatal(err)
	}
	if err := mgmttokens.Revoke(ctx, db, other, tok.ID, "user_2"); !errors.Is(err, mgmttokens.ErrNotFound) {
		t.Fatalf("another org revoked the token: %v", err)
	}
	if err := mgmttokens.Revoke(ctx, db, org, "not-a-uuid", "user_1"); !errors.Is(err, mgmttokens.ErrNotFound) {
		t.Fatalf("revoke of a malformed id: %v", err)
	}
	if _, err := mgmttokens.Authenticate(ctx, db, plain); err != nil {
		t.Fatalf("the token stopped working after refused revocations: %v", err)
	}
	for range 2 {
		if err := mgmttokens.Revoke(ctx, db, org, tok.ID, "user_1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, db, "SELECT COUNT(*) FROM key_audit WHERE key_id = ? AND action = 'revoked'", tok.ID); n != 1 {
		t.Fatalf("%d revocations audited, want 1", n)
	}
	if _, err := mgmttokens.Authenticate(ctx, db, plain); !errors.Is(err, mgmttokens.ErrInvalid) {
		t.Fatalf("revoked token: %v", err)
	}

	live, livePlain, err := mgmttokens.Create(ctx, db, mgmttokens.CreateInput{OrgID: org, Name: "second", Role: mgmttokens.RoleMember})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("UPDATE orgs SET deleted_at = ? WHERE id = ?", time.Now().UTC(), org).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := mgmttokens.Authenticate(ctx, db, livePlain); !errors.Is(err, mgmttokens.ErrInvalid) {
		t.Fatalf("token %s of a deleted org: %v", live.ID, err)
	}
}

func TestListIsTheOrgsNewestFirst(t *testing.T) {
	db, org, other := newOrgs(t)
	var ids []string
	for _, name := range []string{"first", "second"} {
		tok, _, err := mgmttokens.Create(ctx, db, mgmttokens.CreateInput{OrgID: org, Name: name, Role: mgmttokens.RoleMember})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tok.ID)
	}
	if err := db.Exec("UPDATE management_tokens SET created_at = ? WHERE id = ?", time.Now().Add(-time.Hour).UTC(), ids[0]).Error; err != nil {
		t.Fatal(err)
	}
	if err := mgmttokens.Revoke(ctx, db, org, ids[0], "user_1"); err != nil {
		t.Fatal(err)
	}
	list, err := mgmttokens.List(ctx, db, org)
	if err != nil || len(list) != 2 || list[0].ID != ids[1] || list[1].RevokedAt == nil {
		t.Fatalf("list %+v, %v", list, err)
	}
	if theirs, err := mgmttokens.List(ctx, db, other); err != nil || len(theirs) != 0 {
		t.Fatalf("another org lists %d tokens, %v", len(theirs), err)
	}
}
