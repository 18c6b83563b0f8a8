package activities

import (
	"context"
	"fmt"
	"time"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/keys"
)

// StoreKeyInput names the new key by its hash only: the plaintext never
// reaches an activity or the workflow history.
type StoreKeyInput struct {
	OrgID  string
	Scope  auth.Scope
	Hash   string
	Prefix string
	Actor  string
}

// StoreKeyResult tells which key was stored and which were revoked.
type StoreKeyResult struct {
	KeyID      string
	CreatedAt  time.Time
	RevokedIDs []string
}

// StoreKey makes the key the org's only live key of its scope (revoking
// the previous one and auditing both in one transaction, which also tells
// every API instance to forget the org's cached keys). Storing the same hash again
// changes nothing, so a retry is harmless.
func (a *Activities) StoreKey(ctx context.Context, in StoreKeyInput) (StoreKeyResult, error) {
	res, err := keys.Store(ctx, a.DB, keys.StoreInput{OrgID: in.OrgID, Scope: in.Scope, Hash: in.Hash, Prefix: in.Prefix, Actor: in.Actor})
	if err != nil {
		return StoreKeyResult{}, fmt.Errorf("store %s key %s of org %s: %w", in.Scope, in.Prefix, in.OrgID, err)
	}
	return StoreKeyResult{KeyID: res.KeyID, CreatedAt: res.CreatedAt, RevokedIDs: res.RevokedIDs}, nil
}
