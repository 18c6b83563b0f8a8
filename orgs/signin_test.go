package orgs_test

import (
	"errors"
	"testing"
	"time"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/orgs"
)

func TestSignInVerifiesAndCreatesTheOrgOnce(t *testing.T) {
	db := testenv.DB(t)
	signer := testenv.Signer(t)
	token := testenv.Token(t, signer, auth.Session{UserID: "user_1", OrgID: "org_signin", OrgSlug: "acme", Role: auth.AdminRole}, time.Hour)
	sess, org, err := orgs.SignIn(ctx, db, signer.Verifier(), token)
	if err != nil || sess.UserID != "user_1" || !sess.IsAdmin() || org.ID == "" {
		t.Fatalf("sign-in: %+v %+v, %v", sess, org, err)
	}
	_, again, err := orgs.SignIn(ctx, db, signer.Verifier(), token)
	if err != nil || again.ID != org.ID {
		t.Fatalf("second sign-in: org %q (first %q), %v", again.ID, org.ID, err)
	}

	noOrg := testenv.Token(t, signer, auth.Session{UserID: "user_1"}, time.Hour)
	if _, _, err := orgs.SignIn(ctx, db, signer.Verifier(), noOrg); !errors.Is(err, orgs.ErrBadToken) || !errors.Is(err, auth.ErrNoOrg) {
		t.Fatalf("token without an org: %v", err)
	}
	if _, _, err := orgs.SignIn(ctx, db, signer.Verifier(), "not-a-jwt"); !errors.Is(err, orgs.ErrBadToken) {
		t.Fatalf("malformed token: %v", err)
	}

	if err := db.Exec("UPDATE orgs SET deleted_at = ? WHERE id = ?", time.Now().UTC(), org.ID).Error; err != nil {
		t.Fatal(err)
	}
	if _, _, err := orgs.SignIn(ctx, db, signer.Verifier(), token); !errors.Is(err, orgs.ErrDeleted) {
		t.Fatalf("sign-in to a deleted org: %v", err)
	}
}
