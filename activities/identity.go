package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/expd/expd/orgs"
)

// SyncIdentityInput is one verified identity-provider event.
type SyncIdentityInput struct {
	EventID string // the webhook's svix-id
	Change  orgs.IdentityChange
}

// SyncIdentityResult tells whether the change was applied or was older
// than the stored state (a replay or an out-of-order delivery).
type SyncIdentityResult struct {
	Applied bool
}

// SyncIdentity upserts the user, org or membership of the event.
func (a *Activities) SyncIdentity(ctx context.Context, in SyncIdentityInput) (SyncIdentityResult, error) {
	applied, err := orgs.ApplyIdentityChange(ctx, a.DB, in.Change)
	if errors.Is(err, orgs.ErrIncompleteChange) || errors.Is(err, orgs.ErrConflictingChange) {
		return SyncIdentityResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "invalid_identity_change", err)
	}
	return SyncIdentityResult{Applied: applied}, err
}
