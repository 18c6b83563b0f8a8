package billing

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/stripe/stripe-go/v76/webhook"
)

// WebhookTolerance is how old a signed webhook may be.
const WebhookTolerance = 5 * time.Minute

// Event types that change an org's plan; every other type is acknowledged
// and ignored.
const (
	EventCheckoutCompleted    = "checkout.session.completed"
	EventSubscriptionCreated  = "customer.subscription.created"
	EventSubscriptionUpdated  = "customer.subscription.updated"
	EventSubscriptionDeleted  = "customer.subscription.deleted"
	checkoutPaid              = "paid"
	checkoutNoPaymentRequired = "no_payment_required"
)

// ErrSignature is returned for a webhook whose signature header is
// missing, malformed, wrong or outside the tolerance, and when no webhook
// secret is configured (nothing can be verified then).
var ErrSignature = errors.New("invalid payment webhook signature")

// Event is a verified payment event, reduced to what decides a plan.
type Event struct {
	ID             string
	Type           string
	Created        time.Time
	OrgID          string // metadata org_id, else the checkout's client_reference_id
	CustomerID     string
	SubscriptionID string
	Status         string // subscription status; for a checkout, derived from its payment status
	PriceID        string
	Plan           string // metadata plan, as the checkout set it
}

// Handled tells whether events of type t change plans.
func Handled(t string) bool {
	switch t {
	case EventCheckoutCompleted, EventSubscriptionCreated, EventSubscriptionUpdated, EventSubscriptionDeleted:
		return true
	}
	return false
}

// ReadEvent verifies payload against the Payment-Signature header and, for
// a handled type, reads the fields that decide the plan. The endpoint may
// be on a newer API version than stripe-go's, so the version is not checked
// and only the needed fields are read.
func (c *Client) ReadEvent(payload []byte, signature string) (Event, error) {
	if c == nil || c.cfg.WebhookSecret == "" {
		return Event{}, fmt.Errorf("%w: no webhook secret is configured", ErrSignature)
	}
	ev, err := webhook.ConstructEventWithOptions(payload, signature, c.cfg.WebhookSecret,
		webhook.ConstructEventOptions{Tolerance: WebhookTolerance, IgnoreAPIVersionMismatch: true})
	if err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrSignature, err)
	}
	out := Event{ID: ev.ID, Type: string(ev.Type), Created: time.Unix(ev.Created, 0).UTC()}
	if !Handled(out.Type) {
		return out, nil
	}
	if ev.Data == nil || len(ev.Data.Raw) == 0 {
		return out, fmt.Errorf("event %s has no data object", ev.ID)
	}
	if out.Type == EventCheckoutCompleted {
		err = readCheckout(ev.Data.Raw, &out)
	} else {
		err = readSubscription(ev.Data.Raw, &out)
	}
	if err != nil {
		return out, fmt.Errorf("event %s: %w", ev.ID, err)
	}
	return out, nil
}

func readCheckout(raw json.RawMessage, out *Event) error {
	var s struct {
		ClientReferenceID string            `json:"client_reference_id"`
		Customer          reference         `json:"customer"`
		Subscription      reference         `json:"subscription"`
		PaymentStatus     string            `json:"payment_status"`
		Metadata          map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("read checkout session: %w", err)
	}
	out.OrgID = first(s.Metadata[MetadataOrgID], s.ClientReferenceID)
	out.Plan = s.Metadata[MetadataPlan]
	out.CustomerID, out.SubscriptionID = string(s.Customer), string(s.Subscription)
	// A completed subscription checkout has started its subscription once
	// the first payment went through.
	out.Status = StatusIncomplete
	if s.PaymentStatus == checkoutPaid || s.PaymentStatus == checkoutNoPaymentRequired {
		out.Status = StatusActive
	}
	return nil
}

func readSubscription(raw json.RawMessage, out *Event) error {
	var s struct {
		ID       string            `json:"id"`
		Customer reference         `json:"customer"`
		Status   string            `json:"status"`
		Metadata map[string]string `json:"metadata"`
		Items    struct {
			Data []struct {
				Price struct {
					ID string `json:"id"`
				} `json:"price"`
			} `json:"data"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("read subscription: %w", err)
	}
	if s.ID == "" {
		return errors.New("subscription has no id")
	}
	out.OrgID, out.Plan = s.Metadata[MetadataOrgID], s.Metadata[MetadataPlan]
	out.CustomerID, out.SubscriptionID, out.Status = string(s.Customer), s.ID, s.Status
	if len(s.Items.Data) > 0 {
		out.PriceID = s.Items.Data[0].Price.ID
	}
	return nil
}

// reference is a Stripe field that holds an id or, when expanded, the
// object carrying it.
type reference string

func (r *reference) UnmarshalJSON(b []byte) error {
	var id string
	if err := json.Unmarshal(b, &id); err == nil {
		*r = reference(id)
		return nil
	}
	var obj struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return fmt.Errorf("want an id or an object with one: %w", err)
	}
	*r = reference(obj.ID)
	return nil
}

func first(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
