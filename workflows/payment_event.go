package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/billing"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/plans"
)

// PaymentEventInput is one verified payment event of a handled type.
type PaymentEventInput struct {
	Event billing.Event
}

// Where a payment event's subscription state came from.
const (
	SourceProvider = "provider" // read from Stripe when the event was processed
	SourceEvent    = "event"    // the event's own payload (billing not configured, or Stripe unreachable)
)

// PaymentEventResult tells what the event did to the org's plan.
type PaymentEventResult struct {
	Outcome orgs.PlanOutcome
	Plan    plans.Name
	Notice  string
	Source  string
}

// PaymentEvent reconciles one payment event: it reads the subscription's
// current state from Stripe when billing is configured (events arrive out
// of order, the subscription is the truth), falls back to the event's own
// fields when Stripe cannot be read, and stores the resulting plan. It runs
// under PaymentEventID.
func PaymentEvent(ctx workflow.Context, in PaymentEventInput) (PaymentEventResult, error) {
	ev := in.Event
	source := SourceEvent
	// A deleted subscription is final; its event already says so.
	if ev.SubscriptionID != "" && ev.Type != billing.EventSubscriptionDeleted {
		fetchCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: 30 * time.Second,
			RetryPolicy: &temporal.RetryPolicy{
				InitialInterval:    time.Second,
				BackoffCoefficient: 2,
				MaximumInterval:    30 * time.Second,
				MaximumAttempts:    5,
			},
		})
		var fetched activities.FetchSubscriptionResult
		err := workflow.ExecuteActivity(fetchCtx, a.FetchSubscription, activities.FetchSubscriptionInput{SubscriptionID: ev.SubscriptionID}).Get(ctx, &fetched)
		switch {
		case err != nil:
			workflow.GetLogger(ctx).Warn("subscription unreadable at Stripe; applying the event's own state", "event", ev.ID, "error", err)
		case fetched.Configured:
			ev = reconciled(ev, fetched.Subscription)
			source = SourceProvider
		}
	}
	applyCtx := workflow.WithActivityOptions(ctx, webhookStoreOptions)
	var applied activities.ApplyPaymentEventResult
	if err := workflow.ExecuteActivity(applyCtx, a.ApplyPaymentEvent, activities.ApplyPaymentEventInput{Event: ev}).Get(ctx, &applied); err != nil {
		return PaymentEventResult{}, err
	}
	return PaymentEventResult{Outcome: applied.Outcome, Plan: applied.Plan, Notice: applied.Notice, Source: source}, nil
}

// reconciled takes the subscription's current state over the event's,
// keeping the event's org and plan hints where Stripe has none.
func reconciled(ev billing.Event, sub billing.Subscription) billing.Event {
	ev.Status, ev.PriceID = sub.Status, sub.PriceID
	if sub.CustomerID != "" {
		ev.CustomerID = sub.CustomerID
	}
	if id := sub.Metadata[billing.MetadataOrgID]; id != "" && ev.OrgID == "" {
		ev.OrgID = id
	}
	if p := sub.Metadata[billing.MetadataPlan]; p != "" && ev.Plan == "" {
		ev.Plan = p
	}
	return ev
}
