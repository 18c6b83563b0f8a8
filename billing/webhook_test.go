package billing_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v76/webhook"

	"github.com/expd/expd/billing"
)

const webhookSecret = "whsec_test"

func eventPayload(t *testing.T, id, typ string, object map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"id": id, "object": "event", "type": typ, "created": 1_700_000_000,
		// A newer API version than stripe-go v76 pins: must still verify.
		"api_version": "2099-01-01.future",
		"data":        map[string]any{"object": object},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sign(payload []byte, secret string, at time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: at}).Header
}

func TestReadEventVerifiesSignature(t *testing.T) {
	c := billing.New(billing.Config{WebhookSecret: webhookSecret})
	payload := eventPayload(t, "evt_1", "invoice.paid", map[string]any{"id": "in_1"})
	now := time.Now()
	tampered := append([]byte(nil), payload...)
	tampered[len(tampered)-2] = ' '

	if ev, err := c.ReadEvent(payload, sign(payload, webhookSecret, now)); err != nil || ev.ID != "evt_1" || ev.Type != "invoice.paid" {
		t.Fatalf("valid: %+v, %v", ev, err)
	}
	bad := map[string]struct {
		client  *billing.Client
		payload []byte
		header  string
	}{
		"tampered":       {c, tampered, sign(payload, webhookSecret, now)},
		"wrong secret":   {c, payload, sign(payload, "whsec_other", now)},
		"stale":          {c, payload, sign(payload, webhookSecret, now.Add(-billing.WebhookTolerance-time.Minute))},
		"missing header": {c, payload, ""},
		"garbage header": {c, payload, "t=abc,v1=zz"},
		"no secret set":  {billing.New(billing.Config{}), payload, sign(payload, webhookSecret, now)},
		"nil client":     {nil, payload, sign(payload, webhookSecret, now)},
	}
	for name, tc := range bad {
		if _, err := tc.client.ReadEvent(tc.payload, tc.header); !errors.Is(err, billing.ErrSignature) {
			t.Errorf("%s: err %v, want ErrSignature", name, err)
		}
	}
}

func TestReadEventReadsCheckoutAndSubscriptions(t *testing.T) {
	c := billing.New(billing.Config{WebhookSecret: webhookSecret})
	read := func(payload []byte) billing.Event {
		t.Helper()
		ev, err := c.ReadEvent(payload, sign(payload, webhookSecret, time.Now()))
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}

	ev := read(eventPayload(t, "evt_c", billing.EventCheckoutCompleted, map[string]any{
		"id": "cs_1", "object": "checkout.session", "client_reference_id": "org-from-ref", "customer": "cus_1",
		"subscription": "sub_1", "payment_status": "paid", "metadata": map[string]string{"plan": "pro"},
	}))
	want := billing.Event{ID: "evt_c", Type: billing.EventCheckoutCompleted, Created: time.Unix(1_700_000_000, 0).UTC(),
		OrgID: "org-from-ref", CustomerID: "cus_1", SubscriptionID: "sub_1", Status: "active", Plan: "pro"}
	if ev != want {
		t.Fatalf("checkout event %+v, want %+v", ev, want)
	}

	unpaid := read(eventPayload(t, "evt_u", billing.EventCheckoutCompleted, map[string]any{
		"payment_status": "unpaid", "metadata": map[string]string{"org_id": "org-meta"}, "client_reference_id": "org-ref"}))
	if unpaid.Status != "incomplete" || unpaid.OrgID != "org-meta" {
		t.Fatalf("unpaid checkout %+v", unpaid)
	}

	sub := read(eventPayload(t, "evt_s", billing.EventSubscriptionUpdated, map[string]any{
		"id": "sub_9", "object": "subscription", "status": "past_due",
		"customer": map[string]any{"id": "cus_9", "object": "customer"}, // expanded
		"metadata": map[string]string{"org_id": "org-9", "plan": "business"},
		"items":    map[string]any{"data": []map[string]any{{"price": map[string]any{"id": "price_b"}}}},
	}))
	if sub.SubscriptionID != "sub_9" || sub.CustomerID != "cus_9" || sub.Status != "past_due" || sub.PriceID != "price_b" ||
		sub.OrgID != "org-9" || sub.Plan != "business" {
		t.Fatalf("subscription event %+v", sub)
	}

	payload := eventPayload(t, "evt_bad", billing.EventSubscriptionDeleted, map[string]any{"status": "canceled"})
	if _, err := c.ReadEvent(payload, sign(payload, webhookSecret, time.Now())); err == nil || errors.Is(err, billing.ErrSignature) {
		t.Fatalf("subscription without id: err %v, want a data error", err)
	}
}

func TestHandledTypes(t *testing.T) {
	for _, typ := range []string{"checkout.session.completed", "customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted"} {
		if !billing.Handled(typ) {
			t.Errorf("%s not handled", typ)
		}
	}
	for _, typ := range []string{"invoice.paid", "checkout.session.expired", "customer.created", ""} {
		if billing.Handled(typ) {
			t.Errorf("%s handled", typ)
		}
	}
}
