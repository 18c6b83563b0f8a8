package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/orgs"
)

// IdentitySyncInput is one verified identity-provider webhook message.
type IdentitySyncInput struct {
	SvixID string
	Change orgs.IdentityChange
}

// IdentitySyncResult tells whether the change was newer than the store.
type IdentitySyncResult struct {
	Applied bool
}

// webhookStoreOptions retry a webhook's database write for a while: the
// provider has been told 204 already, so a brief outage must not lose it.
var webhookStoreOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 10 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    200 * time.Millisecond,
		BackoffCoefficient: 2,
		MaximumInterval:    time.Minute,
		MaximumAttempts:    50,
	},
}

// IdentitySync upserts the user, org or membership of one webhook message.
// It runs under IdentitySyncID; out-of-order and replayed messages are
// made harmless by the change time the activity compares.
func IdentitySync(ctx workflow.Context, in IdentitySyncInput) (IdentitySyncResult, error) {
	ctx = workflow.WithActivityOptions(ctx, webhookStoreOptions)
	var res activities.SyncIdentityResult
	err := workflow.ExecuteActivity(ctx, a.SyncIdentity, activities.SyncIdentityInput{EventID: in.SvixID, Change: in.Change}).Get(ctx, &res)
	if err != nil {
		return IdentitySyncResult{}, err
	}
	return IdentitySyncResult{Applied: res.Applied}, nil
}
