package billing

import (
	"context"
	"fmt"

	"github.com/stripe/stripe-go/v76"
)

// Subscription is the part of a Stripe subscription that decides a plan.
type Subscription struct {
	ID         string
	CustomerID string
	Status     string
	PriceID    string // the first item's price; expd sells one price per subscription
	Metadata   map[string]string
}

// Subscription reads a subscription's current state from Stripe.
func (c *Client) Subscription(ctx context.Context, id string) (Subscription, error) {
	if !c.Configured() {
		return Subscription{}, ErrNotConfigured
	}
	params := &stripe.SubscriptionParams{}
	params.Context = ctx
	s, err := c.api.Subscriptions.Get(id, params)
	if err != nil {
		return Subscription{}, fmt.Errorf("read subscription %s: %w", id, err)
	}
	out := Subscription{ID: s.ID, Status: string(s.Status), Metadata: s.Metadata}
	if s.Customer != nil {
		out.CustomerID = s.Customer.ID
	}
	if s.Items != nil && len(s.Items.Data) > 0 && s.Items.Data[0].Price != nil {
		out.PriceID = s.Items.Data[0].Price.ID
	}
	return out, nil
}
