package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/guardrails"
	"github.com/expd/expd/verdict"
	"github.com/expd/expd/workflows"
)

// newResultsEnv is a testsuite environment with the real activities
// registered (their mocks are set per test) under a meaningful run id.
func newResultsEnv(t *testing.T, id string) (*testsuite.TestWorkflowEnvironment, *activities.Activities) {
	t.Helper()
	env, acts := newSuiteEnv()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: id})
	mockDeliveries(env)
	return env, acts
}

// A run loads its plan, analyses, publishes, and every step is told the
// run's own workflow id (the runs table records it).
func TestExperimentResultsRunsItsThreeSteps(t *testing.T) {
	in := workflows.ExperimentResultsInput{OrgID: "org", ExperimentID: "exp", ComputedFor: "manual-2026-01-02T10:00:00Z"}
	id := workflows.ResultsWorkflowID(in.ExperimentID, in.ComputedFor)
	env, acts := newSuiteEnv()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: id})
	events := mockDeliveries(env)
	want := activities.RunInput{OrgID: "org", ExperimentID: "exp", ComputedFor: in.ComputedFor, WorkflowID: id}
	env.OnActivity(acts.LoadRunPlan, mock.Anything, want).Return(activities.RunPlan{Kind: "manual", Metrics: 3}, nil).Once()
	env.OnActivity(acts.AnalyzeExperiment, mock.Anything, want).Return(activities.AnalyzeResult{Users: 1234, Rows: 3, SRMGate: "pass"}, nil).Once()
	env.OnActivity(acts.PublishResults, mock.Anything, want).Return(activities.PublishResult{Rows: 3}, nil).Once()
	env.OnActivity(acts.ActOnGuardrails, mock.Anything, want).Return(activities.GuardrailsResult{}, nil).Once()
	decided := activities.VerdictResult{Recommendation: "ship", Variant: "b", Reasons: []verdict.Reason{{Code: verdict.ReasonPrimaryBetter, Metric: "conversion", Variant: "b"}}}
	env.OnActivity(acts.DecideVerdict, mock.Anything, want).Return(decided, nil).Once()

	env.ExecuteWorkflow(workflows.ExperimentResults, in)
	var res workflows.ExperimentResultsResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res != (workflows.ExperimentResultsResult{ComputedFor: in.ComputedFor, Users: 1234, Rows: 3, SRMGate: "pass", Recommendation: "ship"}) {
		t.Fatalf("result %+v", res)
	}
	env.AssertExpectations(t)
	// results.ready carries the verdict.
	if len(*events) != 1 || (*events)[0].Type != "results.ready" {
		t.Fatalf("announced %v", eventTypes(*events))
	}
	var data workflows.ResultsReadyData
	if err := json.Unmarshal((*events)[0].Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Verdict == nil || data.Verdict.Recommendation != "ship" || data.Verdict.Variant != "b" || len(data.Verdict.Reasons) != 1 {
		t.Fatalf("results.ready data %+v", data)
	}
}

// A plan with nothing to compute ends the run at once, with the reason.
func TestExperimentResultsSkipsWithoutAnalysing(t *testing.T) {
	env, acts := newResultsEnv(t, "results/exp/2026-01-02")
	env.OnActivity(acts.LoadRunPlan, mock.Anything, mock.Anything).Return(activities.RunPlan{Skip: "experiment created after the day"}, nil)
	env.ExecuteWorkflow(workflows.ExperimentResults, workflows.ExperimentResultsInput{OrgID: "org", ExperimentID: "exp", ComputedFor: "2026-01-02"})
	var res workflows.ExperimentResultsResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Skipped != "experiment created after the day" || res.Rows != 0 {
		t.Fatalf("result %+v", res)
	}
	env.AssertNotCalled(t, "AnalyzeExperiment", mock.Anything, mock.Anything)
	env.AssertNotCalled(t, "PublishResults", mock.Anything, mock.Anything)
}

// A transient analysis failure is retried; the run then completes.
func TestExperimentResultsRetriesATransientAnalysisFailure(t *testing.T) {
	env, acts := newResultsEnv(t, "results/exp/2026-01-02")
	env.OnActivity(acts.LoadRunPlan, mock.Anything, mock.Anything).Return(activities.RunPlan{Kind: "nightly"}, nil)
	calls := 0
	env.OnActivity(acts.AnalyzeExperiment, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.RunInput) (activities.AnalyzeResult, error) {
			calls++
			if calls < 3 {
				return activities.AnalyzeResult{}, errors.New("connection reset by peer")
			}
			return activities.AnalyzeResult{Users: 10, SRMGate: "insufficient"}, nil
		})
	env.OnActivity(acts.PublishResults, mock.Anything, mock.Anything).Return(activities.PublishResult{Rows: 1}, nil)
	env.OnActivity(acts.ActOnGuardrails, mock.Anything, mock.Anything).Return(activities.GuardrailsResult{}, nil)
	env.OnActivity(acts.DecideVerdict, mock.Anything, mock.Anything).Return(activities.VerdictResult{Recommendation: "keep_running"}, nil)
	env.ExecuteWorkflow(workflows.ExperimentResults, workflows.ExperimentResultsInput{OrgID: "org", ExperimentID: "exp", ComputedFor: "2026-01-02"})
	var res workflows.ExperimentResultsResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if calls != 3 || res.Rows != 1 || res.SRMGate != "insufficient" {
		t.Fatalf("calls %d, result %+v", calls, res)
	}
}

// A failure no retry can fix fails the run at once, and the run is
// recorded as failed with the reason before the workflow ends.
func TestExperimentResultsRecordsAPermanentFailure(t *testing.T) {
	env, acts := newResultsEnv(t, "results/exp/2026-01-02")
	env.OnActivity(acts.LoadRunPlan, mock.Anything, mock.Anything).Return(activities.RunPlan{Kind: "nightly"}, nil)
	analyses := 0
	env.OnActivity(acts.AnalyzeExperiment, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.RunInput) (activities.AnalyzeResult, error) {
			analyses++
			return activities.AnalyzeResult{}, temporal.NewNonRetryableApplicationError("unknown run key", "BadRunKey", nil)
		})
	var marked activities.MarkRunFailedInput
	env.OnActivity(acts.MarkRunFailed, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.MarkRunFailedInput) (activities.MarkRunFailedResult, error) {
			marked = in
			return activities.MarkRunFailedResult{}, nil
		})
	env.ExecuteWorkflow(workflows.ExperimentResults, workflows.ExperimentResultsInput{OrgID: "org", ExperimentID: "exp", ComputedFor: "2026-01-02"})
	err := env.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "unknown run key") {
		t.Fatalf("workflow error %v, want the analysis failure", err)
	}
	if analyses != 1 {
		t.Fatalf("non-retryable failure analysed %d times", analyses)
	}
	if marked.Run.ExperimentID != "exp" || !strings.Contains(marked.Reason, "unknown run key") {
		t.Fatalf("MarkRunFailed got %+v", marked)
	}
	env.AssertNotCalled(t, "PublishResults", mock.Anything, mock.Anything)
}

// After publishing, the run acts on its guardrails: a breach with action
// stop is reported, and the experiment's workflow is told to re-read.
func TestExperimentResultsActsOnGuardrails(t *testing.T) {
	env, acts := newSuiteEnv()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "results/exp/2026-01-02"})
	env.OnActivity(acts.LoadRunPlan, mock.Anything, mock.Anything).Return(activities.RunPlan{Kind: "nightly"}, nil)
	env.OnActivity(acts.AnalyzeExperiment, mock.Anything, mock.Anything).Return(activities.AnalyzeResult{Users: 10, SRMGate: "fail"}, nil)
	env.OnActivity(acts.PublishResults, mock.Anything, mock.Anything).Return(activities.PublishResult{Rows: 1}, nil)
	breach := guardrails.Breach{Key: guardrails.BreachKey("exp", "error_rate", "b"), Metric: "error_rate", Variant: "b", Action: "stop",
		Low: 0.1, High: 0.3, Stopped: true, StoppedVersion: 4}
	env.OnActivity(acts.ActOnGuardrails, mock.Anything, mock.Anything).Return(activities.GuardrailsResult{Breaches: []guardrails.Breach{breach},
		SRM: &guardrails.SRMFailure{Key: guardrails.SRMKey("exp", 3)}}, nil).Once()
	env.OnActivity(acts.DecideVerdict, mock.Anything, mock.Anything).Return(activities.VerdictResult{Recommendation: "stop"}, nil)
	events := mockDeliveries(env)
	signalled := false
	env.OnSignalExternalWorkflow(mock.Anything, workflows.ExperimentWorkflowID("exp"), "", workflows.LifecycleSignal, mock.Anything).Return(
		func(string, string, string, string, interface{}) error { signalled = true; return nil })
	env.ExecuteWorkflow(workflows.ExperimentResults, workflows.ExperimentResultsInput{OrgID: "org", ExperimentID: "exp", ComputedFor: "2026-01-02"})
	var res workflows.ExperimentResultsResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Breaches != 1 || !res.Stopped || !signalled {
		t.Fatalf("result %+v, signalled %v", res, signalled)
	}
	want := []string{"guardrail.breached", "experiment.stopped", "srm.failed", "results.ready"}
	if got := eventTypes(*events); !slices.Equal(got, want) {
		t.Fatalf("announced %v, want %v", got, want)
	}
}
