package activities

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/expd/expd/billing"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/plans"
)

// FetchSubscriptionInput names a subscription to read from Stripe.
type FetchSubscriptionInput struct {
	SubscriptionID string
}

// FetchSubscriptionResult is the subscription's current state, or
// Configured false when this environment cannot ask Stripe.
type FetchSubscriptionResult struct {
	Configured   bool
	Subscription billing.Subscription
}

// FetchSubscription reads a subscription's current state, so an event
// applies what is true now rather than what was true when it was sent.
func (a *Activities) FetchSubscription(ctx context.Context, in FetchSubscriptionInput) (FetchSubscriptionResult, error) {
	if !a.Billing.Configured() {
		return FetchSubscriptionResult{}, nil
	}
	sub, err := a.Billing.Subscription(ctx, in.SubscriptionID)
	if billing.Permanent(err) {
		return FetchSubscriptionResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "stripe_refused", err)
	}
	if err != nil {
		return FetchSubscriptionResult{}, err
	}
	return FetchSubscriptionResult{Configured: true, Subscription: sub}, nil
}

// ApplyPaymentEventInput is a payment event, its subscription fields
// already reconciled with Stripe when that was possible.
type ApplyPaymentEventInput struct {
	Event billing.Event
}

// ApplyPaymentEventResult tells what the event did to the org's plan.
type ApplyPaymentEventResult struct {
	Outcome orgs.PlanOutcome
	Plan    plans.Name // the effective plan the event stands for
	Notice  string     // set while a past-due subscription keeps its plan
}

// ErrUnknownPrice is the failure type of an event whose subscription
// grants a plan through a price this environment does not sell.
const ErrUnknownPrice = "unknown_price"

// ApplyPaymentEvent maps the event's price and status to the org's
// effective plan and stores it, once per event and never over a newer one.
func (a *Activities) ApplyPaymentEvent(ctx context.Context, in ApplyPaymentEventInput) (ApplyPaymentEventResult, error) {
	ev := in.Event
	plan, notice := plans.Free, ""
	if billing.Grants(ev.Status) {
		paid, err := a.paidPlan(ev)
		if err != nil {
			return ApplyPaymentEventResult{}, err
		}
		plan, notice = billing.EffectivePlan(ev.Status, paid)
	}
	outcome, err := orgs.ApplyPlan(ctx, a.DB, orgs.PlanChange{
		EventID: ev.ID, EventType: ev.Type, At: ev.Created, OrgID: ev.OrgID,
		CustomerID: ev.CustomerID, SubscriptionID: ev.SubscriptionID, Status: ev.Status, Plan: plan,
		EndsSubscription: ev.Type == billing.EventSubscriptionDeleted,
		WorkflowID:       workflowID(ctx),
	})
	if err != nil {
		return ApplyPaymentEventResult{}, err
	}
	return ApplyPaymentEventResult{Outcome: outcome, Plan: plan, Notice: notice}, nil
}

// paidPlan is the plan the subscription pays for, by its price. The plan
// the checkout wrote into the metadata stands in only when the price is
// not known here: a checkout event carries none, and an environment
// without prices configured cannot map one.
func (a *Activities) paidPlan(ev billing.Event) (plans.Name, error) {
	if p, ok := a.Billing.PlanForPrice(ev.PriceID); ok {
		return p, nil
	}
	if ev.PriceID == "" || !a.Billing.PricesConfigured() {
		if p, err := plans.Parse(ev.Plan); err == nil && plans.Purchasable(p) {
			return p, nil
		}
	}
	msg := fmt.Sprintf("event %s: price %q maps to no plan and metadata plan %q is not sold", ev.ID, ev.PriceID, ev.Plan)
	return "", temporal.NewNonRetryableApplicationError(msg, ErrUnknownPrice, nil)
}
