package workflows_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/guardrails"
	"github.com/expd/expd/webhooks"
	"github.com/expd/expd/workflows"
)

// One check per listed experiment, all at the run's instant and under the
// run's workflow id; a stop is announced (breach, stop), an SRM failure
// too, a failed check is counted without failing the others, and the
// next page continues as new with the totals and the page's last ref.
func TestGuardrailHealthChecksEachExperimentAndPages(t *testing.T) {
	const wid = "guardrail-health-2026-03-02T10:15:00Z"
	env, acts := newSuiteEnv()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: wid})
	delivered := mockDeliveries(env)
	at := time.Date(2026, 3, 2, 10, 15, 0, 0, time.UTC)
	refs := []activities.ExperimentRef{{OrgID: "o1", ID: "e1"}, {OrgID: "o1", ID: "e2"}, {OrgID: "o2", ID: "e3"}}
	env.OnActivity(acts.ListHealthChecks, mock.Anything, activities.ListHealthInput{After: activities.ExperimentRef{OrgID: "o0", ID: "e0"}, Limit: 200, PerOrg: 20}).
		Return(activities.ListHealthResult{Experiments: refs, Next: refs[2], Deferred: 5}, nil)
	var checked []string
	env.OnActivity(acts.CheckGuardrailHealth, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.HealthCheckInput) (activities.GuardrailsResult, error) {
			if !in.At.Equal(at) || in.WorkflowID != wid {
				return activities.GuardrailsResult{}, errors.New("unexpected input")
			}
			checked = append(checked, in.ExperimentID)
			switch in.ExperimentID {
			case "e1":
				return activities.GuardrailsResult{Breaches: []guardrails.Breach{{Key: guardrails.BreachKey("e1", "error_rate", "b"),
					Metric: "error_rate", Variant: "b", Action: "stop", Stopped: true, StoppedVersion: 4}}}, nil
			case "e2":
				return activities.GuardrailsResult{}, temporal.NewNonRetryableApplicationError("database gone", "Test", nil)
			}
			return activities.GuardrailsResult{SRM: &guardrails.SRMFailure{Key: guardrails.SRMKey("e3", 1)}}, nil
		})
	signalled := false
	env.OnSignalExternalWorkflow(mock.Anything, workflows.ExperimentWorkflowID("e1"), "", workflows.LifecycleSignal, mock.Anything).Return(
		func(string, string, string, string, interface{}) error { signalled = true; return nil })
	prior := workflows.GuardrailHealthResult{At: at, Checked: 200}
	env.ExecuteWorkflow(workflows.GuardrailHealth, workflows.GuardrailHealthInput{At: at, After: activities.ExperimentRef{OrgID: "o0", ID: "e0"}, Totals: prior})

	var next workflows.GuardrailHealthInput
	continuedWith(t, env.GetWorkflowError(), &next)
	slices.Sort(checked)
	if !slices.Equal(checked, []string{"e1", "e2", "e3"}) {
		t.Fatalf("checked %v", checked)
	}
	want := workflows.GuardrailHealthResult{At: at, Checked: 202, Deferred: 5, Breaches: 1, Stopped: 1, SRMFailures: 1, Failed: 1, FailedIDs: []string{"e2"}}
	if !next.At.Equal(at) || next.After != refs[2] || !next.Totals.At.Equal(at) {
		t.Fatalf("continued with %+v", next)
	}
	next.Totals.At = at
	if !equalHealth(next.Totals, want) {
		t.Fatalf("totals %+v, want %+v", next.Totals, want)
	}
	if !signalled {
		t.Fatal("the stopped experiment's workflow was not told to re-read")
	}
	types := eventTypes(*delivered)
	slices.Sort(types)
	if !slices.Equal(types, []string{webhooks.EventExperimentStopped, webhooks.EventGuardrailBreached, webhooks.EventSRMFailed}) {
		t.Fatalf("announced %v", types)
	}
}

// Started by the schedule (no input), the run analyses up to its start
// instant, and the last page ends the run with its totals.
func TestGuardrailHealthDefaultsToItsStartAndEnds(t *testing.T) {
	env, acts := newSuiteEnv()
	mockDeliveries(env)
	start := time.Date(2026, 3, 2, 11, 15, 0, 250_000_000, time.UTC)
	env.SetStartTime(start)
	env.OnActivity(acts.ListHealthChecks, mock.Anything, mock.Anything).
		Return(activities.ListHealthResult{Experiments: []activities.ExperimentRef{{OrgID: "o1", ID: "e1"}}}, nil)
	var got time.Time
	env.OnActivity(acts.CheckGuardrailHealth, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.HealthCheckInput) (activities.GuardrailsResult, error) {
			got = in.At
			return activities.GuardrailsResult{}, nil
		})
	env.ExecuteWorkflow(workflows.GuardrailHealth, workflows.GuardrailHealthInput{})
	var res workflows.GuardrailHealthResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if want := start.Truncate(time.Second); !got.Equal(want) || !res.At.Equal(want) || res.Checked != 1 || res.Failed != 0 {
		t.Fatalf("checked at %v, result %+v; want %v", got, res, want)
	}
}

func equalHealth(a, b workflows.GuardrailHealthResult) bool {
	return a.At.Equal(b.At) && a.Checked == b.Checked && a.Deferred == b.Deferred && a.Breaches == b.Breaches &&
		a.Stopped == b.Stopped && a.SRMFailures == b.SRMFailures && a.Failed == b.Failed && slices.Equal(a.FailedIDs, b.FailedIDs)
}
