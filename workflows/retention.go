package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
)

const (
	retentionPageSize = 100
	// retentionBatch is the number of events per DELETE: small enough to
	// keep each statement short, large enough to move quickly.
	retentionBatch = 5000
)

// RetentionInput is empty when the schedule starts it; AsOf, AfterID and
// Totals carry state across continue-as-new.
type RetentionInput struct {
	AsOf    time.Time
	AfterID string
	Totals  RetentionResult
}

// RetentionResult counts the purge.
type RetentionResult struct {
	Orgs          int
	EventsDeleted int64
	RunsDeleted   int
}

var purgeOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 2 * time.Hour,
	HeartbeatTimeout:    time.Minute,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: 5 * time.Second, BackoffCoefficient: 2,
		MaximumInterval: 5 * time.Minute, MaximumAttempts: 10},
}

// Retention deletes, org by org, events older than the org's plan
// retention and nightly result runs older than that; manual runs are kept.
// The cutoff is fixed when the run starts, so retries and later pages
// purge up to the same instant.
func Retention(ctx workflow.Context, in RetentionInput) (RetentionResult, error) {
	if in.AsOf.IsZero() {
		in.AsOf = workflow.Now(ctx)
	}
	totals := in.Totals
	var page activities.ListOrgsResult
	lctx := workflow.WithActivityOptions(ctx, stepOptions)
	if err := workflow.ExecuteActivity(lctx, a.ListOrgsForRetention, activities.ListOrgsInput{AfterID: in.AfterID, Limit: retentionPageSize}).Get(ctx, &page); err != nil {
		return totals, err
	}
	pctx := workflow.WithActivityOptions(ctx, purgeOptions)
	for _, org := range page.Orgs {
		var done activities.PurgeOrgResult
		in := activities.PurgeOrgInput{OrgID: org.ID, RetentionDays: org.RetentionDays, AsOf: in.AsOf, BatchSize: retentionBatch}
		if err := workflow.ExecuteActivity(pctx, a.PurgeExpired, in).Get(ctx, &done); err != nil {
			return totals, err
		}
		totals.Orgs++
		totals.EventsDeleted += done.EventsDeleted
		totals.RunsDeleted += done.RunsDeleted
	}
	if page.Next != "" {
		return totals, workflow.NewContinueAsNewError(ctx, Retention, RetentionInput{AsOf: in.AsOf, AfterID: page.Next, Totals: totals})
	}
	return totals, nil
}
