package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/webhooks"
	"github.com/expd/expd/workflows"
)

func testEvent() webhooks.Event {
	return webhooks.Event{ID: webhooks.EventID("experiment.stopped/exp-a/1"), OrgID: "org-1", Type: webhooks.EventExperimentStopped,
		ExperimentID: "exp-a", OccurredAt: time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC), Data: json.RawMessage(`{"experiment_id":"exp-a"}`)}
}

func shortRetry(attempts int32) *temporal.RetryPolicy {
	return &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 1, MaximumAttempts: attempts}
}

// failingThen answers DeliverWebhook with failures for the first n calls,
// then success, counting calls.
func failingThen(n int, calls *int) func(context.Context, activities.DeliverWebhookInput) (activities.DeliverWebhookResult, error) {
	return func(context.Context, activities.DeliverWebhookInput) (activities.DeliverWebhookResult, error) {
		*calls++
		if *calls <= n {
			return activities.DeliverWebhookResult{StatusCode: 500}, temporal.NewApplicationError("endpoint answered 500", activities.DeliveryFailed)
		}
		return activities.DeliverWebhookResult{StatusCode: 200}, nil
	}
}

func TestDeliverEventRetriesUntilTheEndpointAccepts(t *testing.T) {
	env, a := newSuiteEnv()
	ev := testEvent()
	env.OnActivity(a.ListWebhookSubscribers, mock.Anything, activities.ListWebhookSubscribersInput{OrgID: "org-1", EventType: ev.Type}).
		Return(activities.ListWebhookSubscribersResult{EndpointIDs: []string{"ep-1", "ep-gone"}}, nil)
	calls := 0
	env.OnActivity(a.DeliverWebhook, mock.Anything, activities.DeliverWebhookInput{EndpointID: "ep-1", Event: ev}).Return(failingThen(2, &calls))
	env.OnActivity(a.DeliverWebhook, mock.Anything, activities.DeliverWebhookInput{EndpointID: "ep-gone", Event: ev}).
		Return(activities.DeliverWebhookResult{Skipped: activities.SkipEndpointGone}, nil)
	env.ExecuteWorkflow(workflows.DeliverEvent, workflows.DeliverEventInput{Event: ev, Retry: shortRetry(5)})
	var res workflows.DeliverEventResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if calls != 3 || len(res.Delivered) != 1 || res.Delivered[0] != "ep-1" || len(res.Skipped) != 1 || len(res.Failed) != 0 {
		t.Fatalf("after 500, 500, 200: %d calls, result %+v; want 3 calls, ep-1 delivered, ep-gone skipped", calls, res)
	}
}

func TestDeliverEventGivesUpAfterTheRetryBudget(t *testing.T) {
	env, a := newSuiteEnv()
	ev := testEvent()
	env.OnActivity(a.ListWebhookSubscribers, mock.Anything, mock.Anything).
		Return(activities.ListWebhookSubscribersResult{EndpointIDs: []string{"ep-1"}}, nil)
	calls := 0
	env.OnActivity(a.DeliverWebhook, mock.Anything, mock.Anything).Return(failingThen(1000, &calls))
	env.ExecuteWorkflow(workflows.DeliverEvent, workflows.DeliverEventInput{Event: ev, Retry: shortRetry(4)})
	var res workflows.DeliverEventResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if calls != 4 || len(res.Failed) != 1 || len(res.Delivered) != 0 {
		t.Fatalf("dead endpoint: %d calls, result %+v; want 4 calls and ep-1 failed", calls, res)
	}
}

// The default policy: 14 attempts, the last about 24 h 15 min after the
// first (on the test clock).
func TestDeliverEventDefaultPolicySpansADay(t *testing.T) {
	env, a := newSuiteEnv()
	env.OnActivity(a.ListWebhookSubscribers, mock.Anything, mock.Anything).
		Return(activities.ListWebhookSubscribersResult{EndpointIDs: []string{"ep-1"}}, nil)
	var first, last time.Time
	calls := 0
	env.OnActivity(a.DeliverWebhook, mock.Anything, mock.Anything).Return(func(context.Context, activities.DeliverWebhookInput) (activities.DeliverWebhookResult, error) {
		calls++
		if calls == 1 {
			first = env.Now()
		}
		last = env.Now()
		return activities.DeliverWebhookResult{}, errors.New("connection refused")
	})
	env.ExecuteWorkflow(workflows.DeliverEvent, workflows.DeliverEventInput{Event: testEvent()})
	var res workflows.DeliverEventResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	span := last.Sub(first)
	if calls != 14 || span < 24*time.Hour || span > 25*time.Hour || len(res.Failed) != 1 {
		t.Fatalf("default policy: %d attempts over %v, result %+v; want 14 over 24h15m", calls, span, res)
	}
}

// announceTwice is a workflow that announces the same event twice, as a
// retried lifecycle step would.
func announceTwice(ctx workflow.Context, ev webhooks.Event) error {
	if err := workflows.Announce(ctx, ev); err != nil {
		return err
	}
	return workflows.Announce(ctx, ev)
}

func TestAnnounceTwiceDeliversOnce(t *testing.T) {
	env, a := newSuiteEnv()
	env.RegisterWorkflow(announceTwice)
	env.RegisterWorkflow(workflows.DeliverEvent)
	ev := testEvent()
	env.OnActivity(a.ListWebhookSubscribers, mock.Anything, mock.Anything).
		Return(activities.ListWebhookSubscribersResult{EndpointIDs: []string{"ep-1"}}, nil).Once()
	env.OnActivity(a.DeliverWebhook, mock.Anything, activities.DeliverWebhookInput{EndpointID: "ep-1", Event: ev}).
		Return(activities.DeliverWebhookResult{StatusCode: 200}, nil).Once()
	env.ExecuteWorkflow(announceTwice, ev)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("announce twice: %v", err)
	}
	env.AssertExpectations(t)
}

func TestAnnounceRefusesAnUndeliverableEvent(t *testing.T) {
	env, _ := newSuiteEnv()
	env.RegisterWorkflow(announceTwice)
	env.RegisterWorkflow(workflows.DeliverEvent)
	ev := testEvent()
	ev.Type = "experiment.exploded"
	env.ExecuteWorkflow(announceTwice, ev)
	if err := env.GetWorkflowError(); err == nil {
		t.Fatal("an unknown event type was announced")
	}
}

func TestDeliverEventID(t *testing.T) {
	if got := workflows.DeliverEventID("evt_1"); got != "webhook/evt_1" {
		t.Fatalf("DeliverEventID = %q", got)
	}
}
