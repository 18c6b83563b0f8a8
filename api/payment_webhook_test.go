package api_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/workflows"
)

const paymentPath = "/v1/webhooks/payment-provider"

func stripeEvent(id, typ string, created time.Time, object map[string]any) map[string]any {
	return map[string]any{"id": id, "object": "event", "type": typ, "created": created.Unix(),
		"api_version": "2025-03-31.basil", "livemode": false, "data": map[string]any{"object": object}}
}

func subscriptionObject(id, customer, status, price string, metadata map[string]string) map[string]any {
	return map[string]any{"id": id, "object": "subscription", "customer": customer, "status": status, "metadata": metadata,
		"items": map[string]any{"object": "list", "data": []map[string]any{{"price": map[string]any{"id": price}}}}}
}

func checkoutObject(orgID, customer, subscription, plan string) map[string]any {
	return map[string]any{"id": "cs_test_1", "object": "checkout.session", "mode": "subscription", "client_reference_id": orgID,
		"customer": customer, "subscription": subscription, "payment_status": "paid", "status": "complete",
		"metadata": map[string]string{"org_id": orgID, "plan": plan}}
}

// pay signs and posts a payment event and waits for its workflow.
func (e *webhookEnv) pay(t *testing.T, event map[string]any) workflows.PaymentEventResult {
	t.Helper()
	body := testenv.Marshal(t, event)
	r := e.Do(t, "POST", paymentPath, body, testenv.PaymentHeaders(body, stripeWebhookSecret, time.Now())...)
	if r.Status != http.StatusNoContent {
		t.Fatalf("%s: %d %s", event["type"], r.Status, r.Body)
	}
	var res workflows.PaymentEventResult
	e.waitWorkflow(t, workflows.PaymentEventID(event["id"].(string)), &res)
	return res
}

func (e *webhookEnv) paymentEvents(t *testing.T) int64 {
	t.Helper()
	var n int64
	if err := e.DB.Table("payment_events").Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPaymentWebhookSignature(t *testing.T) {
	t.Parallel()
	e := newWebhookEnv(t, eventOnlyBilling())
	org := e.NewOrg(t)
	body := testenv.Marshal(t, stripeEvent("evt_sig_"+org.ID, "checkout.session.completed", time.Now(), checkoutObject(org.ID, "cus_sig", "sub_sig", "pro")))
	now := time.Now()
	tampered := append(append([]byte(nil), body[:len(body)-1]...), ' ', '}')
	cases := map[string]struct {
		body    []byte
		headers []string
	}{
		"tampered":                    {tampered, testenv.PaymentHeaders(body, stripeWebhookSecret, now)},
		"wrong secret":                {body, testenv.PaymentHeaders(body, "whsec_other", now)},
		"stale":                       {body, testenv.PaymentHeaders(body, stripeWebhookSecret, now.Add(-6*time.Minute))},
		"missing header":              {body, nil},
		"malformed":                   {body, []string{"Payment-Signature", "v1=deadbeef"}},
		"Stripe's name, wrong secret": {body, []string{"Stripe-Signature", testenv.PaymentSignature(body, "whsec_other", now)}},
		"Stripe's name, stale":        {body, []string{"Stripe-Signature", testenv.PaymentSignature(body, stripeWebhookSecret, now.Add(-6*time.Minute))}},
	}
	for name, tc := range cases {
		if p := testenv.ExpectProblem(t, e.Do(t, "POST", paymentPath, tc.body, tc.headers...), http.StatusUnauthorized); p.Code != "invalid_signature" {
			t.Errorf("%s: code %q", name, p.Code)
		}
	}
	if n := e.paymentEvents(t); n != 0 {
		t.Fatalf("%d events recorded from rejected deliveries", n)
	}
	if res := e.pay(t, stripeEvent("evt_sig_"+org.ID, "checkout.session.completed", now, checkoutObject(org.ID, "cus_sig", "sub_sig", "pro"))); res.Outcome != orgs.PlanApplied {
		t.Fatalf("valid delivery: %+v", res)
	}
	// A real Stripe delivery names the header Stripe-Signature: verified
	// the same way and accepted.
	stripeBody := testenv.Marshal(t, stripeEvent("evt_sig_stripe_"+org.ID, "checkout.session.completed", now, checkoutObject(org.ID, "cus_sig", "sub_sig", "pro")))
	if r := e.Do(t, "POST", paymentPath, stripeBody, "Stripe-Signature", testenv.PaymentSignature(stripeBody, stripeWebhookSecret, now)); r.Status != http.StatusNoContent {
		t.Fatalf("Stripe-Signature delivery: %d %s", r.Status, r.Body)
	}
	var res workflows.PaymentEventResult
	e.waitWorkflow(t, workflows.PaymentEventID("evt_sig_stripe_"+org.ID), &res)
	if n := e.paymentEvents(t); n != 2 {
		t.Fatalf("%d payment events recorded, want the two accepted deliveries", n)
	}

	// Without a webhook secret nothing verifies.
	bare := testenv.New(t)
	testenv.ExpectProblem(t, bare.Do(t, "POST", paymentPath, body, testenv.PaymentHeaders(body, stripeWebhookSecret, now)...), http.StatusUnauthorized)
}

func TestPaymentWebhookEachEventType(t *testing.T) {
	t.Parallel()
	e := newWebhookEnv(t, eventOnlyBilling())
	org := e.NewOrg(t)
	meta := map[string]string{"org_id": org.ID, "plan": "business"}
	t0 := time.Now().Add(-time.Minute)

	steps := []struct {
		event      map[string]any
		plan       string
		status     string
		withNotice bool
	}{
		{stripeEvent("evt_e1_"+org.ID, "checkout.session.completed", t0, checkoutObject(org.ID, "cus_e", "sub_e", "pro")), "pro", "active", false},
		{stripeEvent("evt_e2_"+org.ID, "customer.subscription.created", t0.Add(time.Second), subscriptionObject("sub_e", "cus_e", "active", "", meta)), "business", "active", false},
		{stripeEvent("evt_e3_"+org.ID, "customer.subscription.updated", t0.Add(2*time.Second), subscriptionObject("sub_e", "cus_e", "past_due", "", meta)), "business", "past_due", true},
		{stripeEvent("evt_e4_"+org.ID, "customer.subscription.deleted", t0.Add(3*time.Second), subscriptionObject("sub_e", "cus_e", "canceled", "", meta)), "free", "canceled", false},
	}
	for _, s := range steps {
		res := e.pay(t, s.event)
		got := e.org(t, org.ID)
		if res.Outcome != orgs.PlanApplied || string(got.Plan) != s.plan || got.SubscriptionStatus != s.status || (res.Notice != "") != s.withNotice {
			t.Fatalf("%s: result %+v, org plan %q status %q", s.event["type"], res, got.Plan, got.SubscriptionStatus)
		}
	}
	if got := e.org(t, org.ID); got.StripeCustomerID == nil || *got.StripeCustomerID != "cus_e" {
		t.Fatalf("customer not kept: %+v", got)
	}
}

func TestPaymentWebhookSameEventFiveTimesConcurrently(t *testing.T) {
	t.Parallel()
	e := newWebhookEnv(t, eventOnlyBilling())
	org := e.NewOrg(t)
	id := "evt_dup_" + org.ID
	body := testenv.Marshal(t, stripeEvent(id, "checkout.session.completed", time.Now(), checkoutObject(org.ID, "cus_dup", "sub_dup", "business")))
	headers := testenv.PaymentHeaders(body, stripeWebhookSecret, time.Now())

	var wg sync.WaitGroup
	statuses := make([]int, 5)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], _ = post(e.Server.URL+paymentPath, body, headers)
		}()
	}
	wg.Wait()
	for i, s := range statuses {
		if s != http.StatusNoContent {
			t.Fatalf("delivery %d: status %d", i, s)
		}
	}
	var res workflows.PaymentEventResult
	e.waitWorkflow(t, workflows.PaymentEventID(id), &res)
	if res.Outcome != orgs.PlanApplied || e.paymentEvents(t) != 1 || e.org(t, org.ID).Plan != "business" {
		t.Fatalf("result %+v, %d events recorded", res, e.paymentEvents(t))
	}
}

func TestPaymentWebhookOutOfOrderNewestWins(t *testing.T) {
	t.Parallel()
	e := newWebhookEnv(t, eventOnlyBilling())
	org := e.NewOrg(t)
	meta := map[string]string{"org_id": org.ID, "plan": "pro"}
	t0 := time.Now().Add(-time.Minute)

	// Sent: created (incomplete), updated (active), updated (canceled); delivered newest first.
	newest := e.pay(t, stripeEvent("evt_o3_"+org.ID, "customer.subscription.updated", t0.Add(2*time.Second), subscriptionObject("sub_o", "cus_o", "canceled", "", meta)))
	middle := e.pay(t, stripeEvent("evt_o2_"+org.ID, "customer.subscription.updated", t0.Add(time.Second), subscriptionObject("sub_o", "cus_o", "active", "", meta)))
	oldest := e.pay(t, stripeEvent("evt_o1_"+org.ID, "customer.subscription.created", t0, subscriptionObject("sub_o", "cus_o", "incomplete", "", meta)))
	if newest.Outcome != orgs.PlanApplied || middle.Outcome != orgs.PlanStale || oldest.Outcome != orgs.PlanStale {
		t.Fatalf("outcomes %s, %s, %s", newest.Outcome, middle.Outcome, oldest.Outcome)
	}
	if got := e.org(t, org.ID); got.Plan != "free" || got.SubscriptionStatus != "canceled" {
		t.Fatalf("org %+v", got)
	}
}

func TestPaymentWebhookIgnoresOtherTypes(t *testing.T) {
	t.Parallel()
	e := newWebhookEnv(t, eventOnlyBilling())
	org := e.NewOrg(t)
	for _, typ := range []string{"invoice.paid", "checkout.session.expired", "customer.created", "payment_intent.succeeded"} {
		body := testenv.Marshal(t, stripeEvent("evt_other_"+typ+org.ID, typ, time.Now(), map[string]any{"id": "x", "metadata": map[string]string{"org_id": org.ID}}))
		if r := e.Do(t, "POST", paymentPath, body, testenv.PaymentHeaders(body, stripeWebhookSecret, time.Now())...); r.Status != http.StatusNoContent {
			t.Fatalf("%s: %d %s", typ, r.Status, r.Body)
		}
	}
	if got := e.org(t, org.ID); got.Plan != "free" || got.SubscriptionStatus != "" || e.paymentEvents(t) != 0 {
		t.Fatalf("ignored events changed the org: %+v", got)
	}
	// A handled type with unusable data is refused rather than queued.
	body := testenv.Marshal(t, stripeEvent("evt_broken", "customer.subscription.updated", time.Now(), map[string]any{"status": "active"}))
	testenv.ExpectProblem(t, e.Do(t, "POST", paymentPath, body, testenv.PaymentHeaders(body, stripeWebhookSecret, time.Now())...), http.StatusBadRequest)
}
