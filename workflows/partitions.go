package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
)

// PartitionsAheadDays is how many days ahead of today the events
// partitions exist: a week of missed maintenance runs before live events
// would fall into the default partition.
const PartitionsAheadDays = 7

// EventPartitionsInput is empty when the schedule starts it.
type EventPartitionsInput struct {
	AsOf time.Time
}

var partitionOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 30 * time.Minute,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: 5 * time.Second, BackoffCoefficient: 2,
		MaximumInterval: 5 * time.Minute, MaximumAttempts: 10},
}

// EventPartitions creates the events partitions of yesterday through
// PartitionsAheadDays ahead on PostgreSQL, and moves rows the default
// partition caught into partitions of their own (docs/partitions.md).
func EventPartitions(ctx workflow.Context, in EventPartitionsInput) (activities.EnsurePartitionsResult, error) {
	if in.AsOf.IsZero() {
		in.AsOf = workflow.Now(ctx)
	}
	var out activities.EnsurePartitionsResult
	ctx = workflow.WithActivityOptions(ctx, partitionOptions)
	err := workflow.ExecuteActivity(ctx, a.EnsureEventPartitions, activities.EnsurePartitionsInput{AsOf: in.AsOf, AheadDays: PartitionsAheadDays}).Get(ctx, &out)
	return out, err
}
