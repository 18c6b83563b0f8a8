// Package worker registers every workflow and activity of expd on a
// Temporal worker; `expd worker` and `expd dev` both run it.
package worker

import (
	"go.temporal.io/sdk/worker"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/workflows"
)

// DefaultTaskQueue is the task queue of expd's workflows.
const DefaultTaskQueue = "expd"

// Register adds every workflow and the activities to r.
func Register(r worker.Registry, acts *activities.Activities) {
	r.RegisterActivity(acts)
	r.RegisterWorkflow(workflows.KeyRotation)
	r.RegisterWorkflow(workflows.ExperimentResults)
	r.RegisterWorkflow(workflows.DailyResults)
	r.RegisterWorkflow(workflows.Retention)
	r.RegisterWorkflow(workflows.IdentitySync)
	r.RegisterWorkflow(workflows.PaymentEvent)
}
