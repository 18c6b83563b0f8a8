package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/keys"
	"github.com/expd/expd/orgs"
)

// Org is a test tenant with an admin token, a member token and both keys.
type Org struct {
	ID             string
	ClerkOrgID     string
	AdminToken     string
	MemberToken    string
	PublishableKey string
	SecretKey      string
}

// NewOrg creates an org as the first JWT request would, and issues its keys.
func NewOrg(t testing.TB, db *gorm.DB, signer *auth.Signer) Org {
	t.Helper()
	ctx := context.Background()
	clerk := "org_" + uuid.NewString()[:8]
	org, err := orgs.Ensure(ctx, db, clerk, "slug-"+clerk)
	if err != nil {
		t.Fatalf("create org: %v", err)
	}
	out := Org{ID: org.ID, ClerkOrgID: clerk}
	out.AdminToken = Token(t, signer, auth.Session{UserID: "user_admin_" + clerk, OrgID: clerk, Role: auth.AdminRole}, time.Hour)
	out.MemberToken = Token(t, signer, auth.Session{UserID: "user_member_" + clerk, OrgID: clerk, Role: "org:member"}, time.Hour)
	if out.PublishableKey, err = keys.Issue(ctx, db, org.ID, auth.Publishable, "testenv"); err != nil {
		t.Fatal(err)
	}
	if out.SecretKey, err = keys.Issue(ctx, db, org.ID, auth.Secret, "testenv"); err != nil {
		t.Fatal(err)
	}
	return out
}

// Token signs a session token.
func Token(t testing.TB, s *auth.Signer, sess auth.Session, ttl time.Duration) string {
	t.Helper()
	tok, err := s.Sign(sess, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
