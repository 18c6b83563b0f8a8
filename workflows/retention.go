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

// RetentionResult counts the purge; EventsDeleted includes the rows of
// the dropped partitions.
type RetentionResult struct {
	Orgs              int
	PartitionsDropped int
	EventsDeleted     int64
	RunsDeleted       int
}

var purgeOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 2 * time.Hour,
	HeartbeatTimeout:    time.Minute,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: 5 * time.Second, BackoffCoefficient: 2,
		MaximumInterval: 5 * time.Minute, MaximumAttempts: 10},
}

// Retention drops the day partitions of events no org keeps any more
// (PostgreSQL), then deletes, org by org, events older than the org's plan
// retention and nightly result runs older than that; manual runs are kept.
// The cutoff is fixed when the run starts, so retries and later pages
// purge up to the same instant.
func Retention(ctx workflow.Context, in RetentionInput) (RetentionResult, error) {
	if in.AsOf.IsZero() {
		in.AsOf = workflow.Now(ctx)
	}
	totals := in.Totals
	pctx := workflow.WithActivityOptions(ctx, purgeOptions)
	// Runs started before partitioned events skip the drop (version guard
	// for their histories).
	dropsPartitions := workflow.GetVersion(ctx, "drop-expired-partitions", workflow.DefaultVersion, 1) == 1
	if in.AfterID == "" && dropsPartitions {
		// Whole expired days go first, so the per-org deletes below only
		// meet the partial edge: days some other org still keeps.
		var dropped activities.DropPartitionsResult
		if err := workflow.ExecuteActivity(pctx, a.DropExpiredPartitions, activities.DropPartitionsInput{AsOf: in.AsOf}).Get(ctx, &dropped); err != nil {
			return totals, err
		}
		totals.PartitionsDropped = dropped.Partitions
		totals.EventsDeleted += dropped.EventsDeleted
	}
	var page activities.ListOrgsResult
	lctx := workflow.WithActivityOptions(ctx, stepOptions)
	if err := workflow.ExecuteActivity(lctx, a.ListOrgsForRetention, activities.ListOrgsInput{AfterID: in.AfterID, Limit: retentionPageSize}).Get(ctx, &page); err != nil {
		return totals, err
	}
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
