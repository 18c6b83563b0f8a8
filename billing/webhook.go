package billing

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v76"
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
	// Verified first, parsed after: a correctly signed body that is not
	// an event is malformed (400), not a bad signature.
	if err := webhook.ValidatePayloadWithTolerance(payload, signature, c.cfg.WebhookSecret, WebhookTolerance); err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrSignature, err)
	}
	var ev stripe.Event
	if err := json.Unmarshal(payload, &ev); err != nil {
		return Event{}, fmt.Errorf("payment event is not a JSON event object: %w", err)
	}
	if err := checkEnvelope(ev.ID, ev.Created, time.Now()); err != nil {
		return Event{}, err
	}
	out := Event{ID: ev.ID, Type: string(ev.Type), Created: time.Unix(ev.Created, 0).UTC()}
	if !Handled(out.Type) {
		return out, nil
	}
	if ev.Data == nil || len(ev.Data.Raw) == 0 {
		return out, fmt.Errorf("event %s has no data object", ev.ID)
	}
	var err error
	if out.Type == EventCheckoutCompleted {
		err = readCheckout(ev.Data.Raw, &out)
	} else {
		err = readSubscription(ev.Data.Raw, &out)
	}
	if err != nil {
		return out, fmt.Errorf("event %s: %w", ev.ID, err)
	}
	return out, out.checkFields()
}

// MaxEventIDLength bounds an event id: Stripe's are about 30 characters,
// and the id names the event's workflow (stripe/<id>), which Temporal
// limits to 1,000 bytes.
const MaxEventIDLength = 255

// maxCreatedAhead is how far past the server's clock an event's created
// time may be: a signed delivery is at most WebhookTolerance old, and
// clocks drift, but an event from the future would win every later
// event's ordering.
const maxCreatedAhead = 24 * time.Hour

// checkEnvelope refuses a correctly signed event that could never be
// applied, before it is acknowledged: no id (events are applied once per
// id, so two without one would collide), an id with control characters
// or too long for its workflow id, a created time that is not a plausible
// Unix time.
func checkEnvelope(id string, created int64, now time.Time) error {
	switch {
	case id == "":
		return errors.New("payment event has no id")
	case len(id) > MaxEventIDLength:
		return fmt.Errorf("payment event id is %d bytes long; at most %d", len(id), MaxEventIDLength)
	case hasControl(id):
		return errors.New("payment event id holds a control character")
	case created <= 0 || created > now.Add(maxCreatedAhead).Unix():
		return fmt.Errorf("payment event %s: created %d is not a Unix time between 1970 and a day from now", id, created)
	}
	return nil
}

// checkFields refuses ids and names no store can hold (a control character
// such as NUL), so the event does not fail in its workflow forever.
func (e Event) checkFields() error {
	for name, v := range map[string]string{"org id": e.OrgID, "customer": e.CustomerID, "subscription": e.SubscriptionID,
		"status": e.Status, "price": e.PriceID, "plan": e.Plan} {
		if hasControl(v) {
			return fmt.Errorf("payment event %s: its %s holds a control character", e.ID, name)
		}
	}
	return nil
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0
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
