package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/erasure"
)

// ErasureInput names the erasure's row; the user id is read from there by
// each activity and never enters this workflow's history.
type ErasureInput struct {
	ErasureID string
}

// ErasureResult is the rows removed per table.
type ErasureResult struct {
	Removed map[string]int64
}

// eraseOptions retry a step for up to a day (the contract a customer can
// promise), backing off to once every ten minutes: a database or
// ClickHouse outage delays an erasure, it does not fail it.
// A step heartbeats (activities.EraseTable), so one lost with its worker
// is retried elsewhere after HeartbeatTimeout, not after the hour.
var eraseOptions = workflow.ActivityOptions{
	StartToCloseTimeout: time.Hour,
	HeartbeatTimeout:    10 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: 5 * time.Second, BackoffCoefficient: 2,
		MaximumInterval: 10 * time.Minute},
	ScheduleToCloseTimeout: 24 * time.Hour,
}

// Erasure removes one user's rows table by table (erasure.Tables: scores
// and evaluations are found through the user's model calls, so before
// the events), then completes the erasure, which clears the sealed user
// id and records the counts in the audit log. Every step is idempotent,
// so a worker restart resumes at the step it was in.
func Erasure(ctx workflow.Context, in ErasureInput) (ErasureResult, error) {
	actx := workflow.WithActivityOptions(ctx, eraseOptions)
	for _, table := range erasure.Tables {
		if err := workflow.ExecuteActivity(actx, a.EraseTable, activities.EraseTableInput{ErasureID: in.ErasureID, Table: table}).Get(ctx, nil); err != nil {
			return ErasureResult{}, err
		}
	}
	var done activities.CompleteErasureResult
	if err := workflow.ExecuteActivity(actx, a.CompleteErasure, activities.CompleteErasureInput{ErasureID: in.ErasureID}).Get(ctx, &done); err != nil {
		return ErasureResult{}, err
	}
	return ErasureResult{Removed: done.Removed}, nil
}
