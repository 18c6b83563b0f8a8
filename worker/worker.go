// Package worker starts expd's Temporal worker: Run registers the search
// attributes, ensures the schedules, registers every workflow and the
// activities, starts polling, reconciles the experiments' lifecycle
// workflows in the background, and triggers the periodic reconcile once.
// `expd worker` and `expd dev` both call it.
package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/workflowclient"
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
	r.RegisterWorkflow(workflows.Redrive)
	r.RegisterWorkflow(workflows.Evaluator)
	r.RegisterWorkflow(workflows.Erasure)
}

// Run is the whole worker start on c's namespace and taskQueue: the search
// attributes that result runs are started with (a namespace without them
// would refuse those starts), the schedules (daily results, retention, guardrail health),
// then the registrations. It returns once the worker polls; Stop ends it.
func Run(ctx context.Context, c client.Client, namespace, taskQueue string, acts *activities.Activities, opts worker.Options) (worker.Worker, error) {
	if err := workflowclient.EnsureSearchAttributes(ctx, c, namespace); err != nil {
		return nil, fmt.Errorf("register search attributes %s and %s (Keyword) on namespace %s: %w",
			workflows.SearchAttributeOrgID, workflows.SearchAttributeExperimentID, namespace, err)
	}
	if err := workflowclient.EnsureSchedules(ctx, c, taskQueue); err != nil {
		return nil, fmt.Errorf("ensure schedules: %w", err)
	}
	w := worker.New(c, taskQueue, opts)
	Register(w, acts)
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	if acts != nil && acts.DB != nil {
		// In the background: a large deployment's reconciliation must not
		// hold up the worker, and a failed one is retried by the next start.
		go reconcile(context.WithoutCancel(ctx), workflowclient.Starter{Client: c, TaskQueue: taskQueue}, acts)
	}
	// What changes committed while no worker ran still owe Temporal
	// (announcements, lifecycle signals) goes out now, not at the next
	// five-minute mark.
	if err := workflowclient.TriggerRedrive(ctx, c, taskQueue); err != nil {
		slog.Error("reconcile at worker start", "error", err)
	}
	return w, nil
}

// reconcileTimeout bounds the reconciliation of one worker start.
const reconcileTimeout = 10 * time.Minute

// reconcile gives every experiment with a pending scheduled step its
// lifecycle workflow (workflowclient.Starter.ReconcileExperiments) and logs
// what it did. Unlike the periodic reconcile (workflows.Redrive), which
// handles the signals changes recorded as owed, it checks every scheduled
// and running experiment: those written before the workflow existed, or
// whose workflow was terminated by hand.
func reconcile(ctx context.Context, s workflowclient.Starter, acts *activities.Activities) {
	ctx, cancel := context.WithTimeout(ctx, reconcileTimeout)
	defer cancel()
	res, err := s.ReconcileExperiments(ctx, acts.DB)
	if err != nil {
		slog.Error("reconcile experiment workflows", "checked", res.Checked, "signalled", res.Signalled, "error", err)
		return
	}
	slog.Info("reconciled experiment workflows", "checked", res.Checked, "signalled", res.Signalled)
	n, err := s.ReconcileEvaluators(ctx, acts.DB)
	if err != nil {
		slog.Error("reconcile evaluator workflows", "error", err)
		return
	}
	slog.Info("reconciled evaluator workflows", "live", n)
}
