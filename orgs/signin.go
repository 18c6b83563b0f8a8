package orgs

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/expd/expd/auth"
)

// ErrBadToken wraps the verifier's refusal of an identity session token.
var ErrBadToken = errors.New("identity token not accepted")

// SignIn verifies an identity-provider session token and returns its
// session and org, created on first sight (Ensure): the one sign-in of
// the API's dashboard routes and of the dashboard's pages. It fails with
// ErrBadToken (wrapping the verifier's reason), ErrDeleted, or a database
// error.
func SignIn(ctx context.Context, db *gorm.DB, v *auth.Verifier, token string) (auth.Session, Org, error) {
	sess, err := v.Verify(token)
	if err != nil {
		return sess, Org{}, fmt.Errorf("%w: %w", ErrBadToken, err)
	}
	org, err := Ensure(ctx, db, sess.OrgID, sess.OrgSlug)
	return sess, org, err
}
