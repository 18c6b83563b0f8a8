package billing

import (
	"context"
	"fmt"

	"github.com/stripe/stripe-go/v76"

	"github.com/expd/expd/plans"
)

// Metadata keys set on checkout sessions and their subscriptions, so an
// event names its org and plan even when Stripe cannot be asked.
const (
	MetadataOrgID = "org_id"
	MetadataPlan  = "plan"
)

// CheckoutInput is one org's purchase of a plan.
type CheckoutInput struct {
	OrgID      string
	Plan       plans.Name // pro or business
	CustomerID string     // the org's Stripe customer, if it has one
	SuccessURL string
	CancelURL  string
}

// CreateCheckoutSession creates a hosted Checkout Session in subscription
// mode and returns its URL.
func (c *Client) CreateCheckoutSession(ctx context.Context, in CheckoutInput) (string, error) {
	if !c.Configured() {
		return "", ErrNotConfigured
	}
	price, ok := c.priceForPlan(in.Plan)
	if !ok {
		return "", fmt.Errorf("plan %q cannot be bought through checkout", in.Plan)
	}
	metadata := map[string]string{MetadataOrgID: in.OrgID, MetadataPlan: string(in.Plan)}
	params := &stripe.CheckoutSessionParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModeSubscription)),
		LineItems:         []*stripe.CheckoutSessionLineItemParams{{Price: stripe.String(price), Quantity: stripe.Int64(1)}},
		ClientReferenceID: stripe.String(in.OrgID),
		SuccessURL:        stripe.String(in.SuccessURL),
		CancelURL:         stripe.String(in.CancelURL),
		Metadata:          metadata,
		SubscriptionData:  &stripe.CheckoutSessionSubscriptionDataParams{Metadata: metadata},
	}
	if in.CustomerID != "" {
		params.Customer = stripe.String(in.CustomerID)
	}
	params.Context = ctx
	s, err := c.api.CheckoutSessions.New(params)
	if err != nil {
		return "", fmt.Errorf("create checkout session: %w", err)
	}
	return s.URL, nil
}

// CreatePortalSession creates a billing-portal session for a customer and
// returns its URL. An empty returnURL leaves the portal's default.
func (c *Client) CreatePortalSession(ctx context.Context, customerID, returnURL string) (string, error) {
	if !c.Configured() {
		return "", ErrNotConfigured
	}
	params := &stripe.BillingPortalSessionParams{Customer: stripe.String(customerID)}
	if returnURL != "" {
		params.ReturnURL = stripe.String(returnURL)
	}
	params.Context = ctx
	s, err := c.api.BillingPortalSessions.New(params)
	if err != nil {
		return "", fmt.Errorf("create portal session: %w", err)
	}
	return s.URL, nil
}
