package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/auth"
)

// KeyRotationInput carries the new key's hash, never the key: workflow
// history is readable by Temporal operators and is kept.
type KeyRotationInput struct {
	OrgID  string
	Scope  auth.Scope
	Hash   string
	Prefix string // first characters of the key, safe to show
	Actor  string // identity-provider user id of the admin
}

// KeyRotationResult tells which key is now live and which were revoked.
type KeyRotationResult struct {
	KeyID      string
	CreatedAt  time.Time
	RevokedIDs []string
}

// KeyRotation swaps the org's key of one scope: the activity stores the
// new hash and revokes the previous key in one transaction with an audit
// entry. It runs under id KeyRotationID, one at a time per org and scope.
func KeyRotation(ctx workflow.Context, in KeyRotationInput) (KeyRotationResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    200 * time.Millisecond,
			BackoffCoefficient: 2,
			MaximumInterval:    2 * time.Second,
		},
	})
	var stored activities.StoreKeyResult
	err := workflow.ExecuteActivity(ctx, a.StoreKey, activities.StoreKeyInput{
		OrgID: in.OrgID, Scope: in.Scope, Hash: in.Hash, Prefix: in.Prefix, Actor: in.Actor,
	}).Get(ctx, &stored)
	if err != nil {
		return KeyRotationResult{}, err
	}
	return KeyRotationResult{KeyID: stored.KeyID, CreatedAt: stored.CreatedAt, RevokedIDs: stored.RevokedIDs}, nil
}
