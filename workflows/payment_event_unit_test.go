package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/billing"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/workflows"
)

// When Stripe stays unreachable the event's own state is applied, so a
// completed checkout is not lost to a provider outage.
func TestPaymentEventFallsBackToTheEventWhenStripeIsUnreachable(t *testing.T) {
	env, acts := newSuiteEnv()
	env.OnActivity(acts.FetchSubscription, mock.Anything, activities.FetchSubscriptionInput{SubscriptionID: "sub_1"}).
		Return(activities.FetchSubscriptionResult{}, errors.New("connection refused"))
	ev := billing.Event{ID: "evt_1", Type: billing.EventCheckoutCompleted, Created: time.Unix(1_700_000_000, 0).UTC(),
		OrgID: "org", SubscriptionID: "sub_1", Status: "active", Plan: "pro"}
	var applied billing.Event
	env.OnActivity(acts.ApplyPaymentEvent, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ApplyPaymentEventInput) (activities.ApplyPaymentEventResult, error) {
			applied = in.Event
			return activities.ApplyPaymentEventResult{Outcome: orgs.PlanApplied, Plan: "pro"}, nil
		})

	env.ExecuteWorkflow(workflows.PaymentEvent, workflows.PaymentEventInput{Event: ev})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res workflows.PaymentEventResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Source != workflows.SourceEvent || applied != ev {
		t.Fatalf("result %+v, applied %+v, want the event as sent", res, applied)
	}
}
