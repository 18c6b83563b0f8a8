// Package worker starts expd's Temporal worker: Run registers the search
// attributes, ensures the schedules, registers every workflow and the
// activities, and starts polling. `expd worker` and `expd dev` both call it.
package worker

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"
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
	r.RegisterWorkflow(workflows.EventPartitions)
	r.RegisterWorkflow(workflows.IdentitySync)
	r.RegisterWorkflow(workflows.PaymentEvent)
	r.RegisterWorkflow(workflows.DeliverEvent)
	r.RegisterWorkflow(workflows.Experiment)
	r.RegisterWorkflow(workflows.GuardrailHealth)
}

// Run is the whole worker start on c's namespace and taskQueue: the search
// attributes that result runs are started with (a namespace without them
// would refuse those starts), the schedules (daily results, retention, guardrail health),
// then the registrations. It returns once the worker polls; Stop ends it.
func Run(ctx context.Context, c client.Client, namespace, taskQueue string, acts *activities.Activities, opts worker.Options) (worker.Worker, error) {
	if err := workflows.EnsureSearchAttributes(ctx, c, namespace); err != nil {
		return nil, fmt.Errorf("register search attributes %s and %s (Keyword) on namespace %s: %w",
			workflows.SearchAttributeOrgID, workflows.SearchAttributeExperimentID, namespace, err)
	}
	if err := workflows.EnsureSchedules(ctx, c, taskQueue); err != nil {
		return nil, fmt.Errorf("ensure schedules: %w", err)
	}
	w := worker.New(c, taskQueue, opts)
	Register(w, acts)
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	return w, nil
}
