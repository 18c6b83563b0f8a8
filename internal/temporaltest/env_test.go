package temporaltest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/workflows"
)

func TestMain(m *testing.M) { Main(m) }

var experimentKey = temporal.NewSearchAttributeKeyKeyword(workflows.SearchAttributeExperimentID)

func double(_ context.Context, n int) (int, error) { return 2 * n, nil }

// doubleTagged tags itself with an experiment id and doubles n in an activity.
func doubleTagged(ctx workflow.Context, experimentID string, n int) (int, error) {
	if err := workflow.UpsertTypedSearchAttributes(ctx, experimentKey.ValueSet(experimentID)); err != nil {
		return 0, err
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var doubled int
	err := workflow.ExecuteActivity(ctx, double, n).Get(ctx, &doubled)
	return doubled, err
}

func runDoubleTagged(t *testing.T, n int) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := Start(t)
	env.NewWorker(func(r worker.Registry) {
		r.RegisterWorkflow(doubleTagged)
		r.RegisterActivity(double)
	})
	experimentID := fmt.Sprintf("exp-%s", env.TaskQueue)

	run, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: env.TaskQueue}, doubleTagged, experimentID, n)
	if err != nil {
		t.Fatalf("start workflow: %v", err)
	}
	var got int
	if err := run.Get(ctx, &got); err != nil {
		t.Fatalf("workflow result: %v", err)
	}
	if got != 2*n {
		t.Fatalf("doubleTagged(%d) = %d, want %d", n, got, 2*n)
	}
	assertTaggedRunFound(t, ctx, env, experimentID, run.GetID())
}

// assertTaggedRunFound waits for visibility, which is written asynchronously,
// to list the run under its experiment id.
func assertTaggedRunFound(t *testing.T, ctx context.Context, env *Env, experimentID, workflowID string) {
	t.Helper()
	query := fmt.Sprintf("%s = '%s'", workflows.SearchAttributeExperimentID, experimentID)
	for {
		resp, err := env.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: env.Namespace, Query: query})
		if err != nil {
			t.Fatalf("list workflows where %s: %v", query, err)
		}
		if len(resp.GetExecutions()) == 1 && resp.GetExecutions()[0].GetExecution().GetWorkflowId() == workflowID {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("workflows where %s = %v, want only %s", query, resp.GetExecutions(), workflowID)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Two parallel tests share the server; each one's worker only sees its own task queue.
func TestWorkflowWithSearchAttributeRunsOnSharedServer(t *testing.T) { runDoubleTagged(t, 21) }
func TestSecondParallelTestGetsItsOwnTaskQueue(t *testing.T)         { runDoubleTagged(t, 5) }

func TestStartGivesEachEnvAUniqueTaskQueue(t *testing.T) {
	first, second := Start(t), Start(t)
	if first.TaskQueue == second.TaskQueue {
		t.Fatalf("two Envs share task queue %q", first.TaskQueue)
	}
	if !strings.HasPrefix(first.TaskQueue, "TestStartGivesEachEnvAUniqueTaskQueue-") {
		t.Errorf("task queue %q does not name its test", first.TaskQueue)
	}
	if first.Namespace != second.Namespace || first.Client != second.Client {
		t.Errorf("Envs of one binary should share the server's namespace and client")
	}
}

func TestTaskQueueNameReplacesSeparators(t *testing.T) {
	if got := taskQueueName("TestX/sub case#1"); got != "TestX-sub-case-1" {
		t.Fatalf("taskQueueName = %q, want %q", got, "TestX-sub-case-1")
	}
}
