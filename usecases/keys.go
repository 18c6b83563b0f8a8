package usecases

import (
	"context"
	"time"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/keys"
	"github.com/expd/expd/workflowclient"
	"github.com/expd/expd/workflows"
)

// RotatedKey is a key just issued; Plain is shown this once (a
// publishable key can be read again by an admin).
type RotatedKey struct {
	Scope     auth.Scope
	Plain     string
	CreatedAt time.Time
}

// RotateKey issues a new key of the scope for the org and revokes the
// previous one, through the KeyRotation workflow, which only ever sees
// the key's hash.
func (s Service) RotateKey(ctx context.Context, orgID, actor string, scope auth.Scope) (RotatedKey, error) {
	if s.Workflows.Client == nil {
		return RotatedKey{}, workflowclient.ErrNotConnected
	}
	key, err := auth.GenerateKey(scope)
	if err != nil {
		return RotatedKey{}, err
	}
	// Detached from the caller: a started rotation must be followed to its
	// end (and the publishable key stored) even if the caller goes away.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), workflowclient.KeyRotationTimeout)
	defer cancel()
	res, err := s.Workflows.RunKeyRotation(ctx, workflows.KeyRotationInput{OrgID: orgID, Scope: scope, Hash: key.Hash, Prefix: key.Prefix, Actor: actor})
	if err != nil {
		return RotatedKey{}, err
	}
	s.SDK.Keys.ForgetOrg(orgID)
	if scope == auth.Publishable {
		s.keepPublishable(ctx, key)
	}
	rotated := RotatedKey{Scope: scope, Plain: key.Plain, CreatedAt: res.CreatedAt}
	if s.KeyRotated != nil {
		s.KeyRotated(ctx, orgID, rotated)
	}
	return rotated, nil
}

// keepPublishable keeps the plaintext of a new publishable key so that an
// admin can read it again. A failure only loses the re-read: the key
// itself is live and is answered anyway.
func (s Service) keepPublishable(ctx context.Context, key auth.NewKey) {
	if err := keys.KeepPublishable(ctx, s.DB, key); err != nil {
		s.Logger.ErrorContext(ctx, "store publishable key for re-read", "prefix", key.Prefix, "error", err)
	}
}
