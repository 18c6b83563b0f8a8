package workflows_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/workflows"
)

// The reconcile starts the workflow of every live evaluator (one created
// while Temporal was away has none), under the evaluator's own id.
func TestRedriveStartsEveryLiveEvaluator(t *testing.T) {
	env, acts := newSuiteEnv()
	env.RegisterWorkflow(workflows.Evaluator)
	env.OnActivity(acts.ListPendingAnnouncements, mock.Anything, mock.Anything).Return(activities.PendingAnnouncementsResult{}, nil)
	env.OnActivity(acts.ListOwedSignals, mock.Anything, mock.Anything).Return(activities.OwedSignalsResult{}, nil)
	env.OnActivity(acts.PurgeAnnounced, mock.Anything, mock.Anything).Return(activities.PurgeAnnouncedResult{}, nil)
	env.OnActivity(acts.ListLiveEvaluators, mock.Anything, mock.Anything).Return(activities.LiveEvaluatorsResult{IDs: []string{"ev-1", "ev-2"}}, nil)
	env.OnWorkflow(workflows.Evaluator, mock.Anything, mock.Anything).Return(nil)
	var started []string
	env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		started = append(started, info.WorkflowExecution.ID)
	})
	env.ExecuteWorkflow(workflows.Redrive, workflows.RedriveInput{})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res workflows.RedriveResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	slices.Sort(started)
	if res.EvaluatorsStarted != 2 || !slices.Equal(started, []string{workflows.EvaluatorID("ev-1"), workflows.EvaluatorID("ev-2")}) {
		t.Fatalf("started %d evaluators: %v", res.EvaluatorsStarted, started)
	}
}
