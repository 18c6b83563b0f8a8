package billing_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/expd/expd/billing"
	"github.com/expd/expd/internal/stripemock"
	"github.com/expd/expd/plans"
)

func configured(t *testing.T) (*billing.Client, *stripemock.Server) {
	t.Helper()
	srv := stripemock.Start(t)
	c := billing.New(billing.Config{
		SecretKey: "sk_test_123", WebhookSecret: "whsec_test",
		PricePro: "price_pro", PriceBusiness: "price_business",
		APIBase: srv.URL, HTTPClient: srv.HTTPClient(),
		ReturnOrigins: []string{"https://app.example"},
	})
	if !c.Configured() {
		t.Fatal("client with key and prices is not configured")
	}
	return c, srv
}

func TestStripeCallsAgainstStripeMock(t *testing.T) {
	c, srv := configured(t)
	ctx := context.Background()

	t.Run("checkout for a new customer", func(t *testing.T) {
		url, err := c.CreateCheckoutSession(ctx, billing.CheckoutInput{OrgID: "org-1", Plan: plans.Business,
			SuccessURL: "https://app.example/ok", CancelURL: "https://app.example/cancel"})
		if err != nil || !strings.HasPrefix(url, "https://") {
			t.Fatalf("checkout url %q, err %v", url, err)
		}
		reqs := srv.Recorder.Requests("/v1/checkout/sessions")
		f := reqs[len(reqs)-1].Form
		want := map[string]string{
			"mode": "subscription", "line_items[0][price]": "price_business", "line_items[0][quantity]": "1",
			"client_reference_id": "org-1", "metadata[org_id]": "org-1", "metadata[plan]": "business",
			"subscription_data[metadata][org_id]": "org-1", "subscription_data[metadata][plan]": "business",
			"success_url": "https://app.example/ok", "cancel_url": "https://app.example/cancel",
		}
		for k, v := range want {
			if f.Get(k) != v {
				t.Errorf("%s = %q, want %q", k, f.Get(k), v)
			}
		}
		if f.Has("customer") {
			t.Errorf("sent customer %q for an org without one", f.Get("customer"))
		}
	})

	t.Run("checkout reuses the customer", func(t *testing.T) {
		if _, err := c.CreateCheckoutSession(ctx, billing.CheckoutInput{OrgID: "org-2", Plan: plans.Pro, CustomerID: "cus_known",
			SuccessURL: "https://app.example/ok", CancelURL: "https://app.example/cancel"}); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Recorder.Requests("/v1/checkout/sessions")
		f := reqs[len(reqs)-1].Form
		if f.Get("customer") != "cus_known" || f.Get("line_items[0][price]") != "price_pro" {
			t.Fatalf("sent %v", f)
		}
	})

	t.Run("checkout refuses plans not sold", func(t *testing.T) {
		before := len(srv.Recorder.Requests("/v1/checkout/sessions"))
		if _, err := c.CreateCheckoutSession(ctx, billing.CheckoutInput{OrgID: "org-3", Plan: plans.Enterprise}); err == nil {
			t.Fatal("enterprise checkout accepted")
		}
		if after := len(srv.Recorder.Requests("/v1/checkout/sessions")); after != before {
			t.Fatal("refused checkout still called Stripe")
		}
	})

	t.Run("portal", func(t *testing.T) {
		url, err := c.CreatePortalSession(ctx, "cus_known", "https://app.example/billing")
		if err != nil || url == "" {
			t.Fatalf("portal url %q, err %v", url, err)
		}
		f := srv.Recorder.Requests("/v1/billing_portal/sessions")[0].Form
		if f.Get("customer") != "cus_known" || f.Get("return_url") != "https://app.example/billing" {
			t.Fatalf("sent %v", f)
		}
	})

	t.Run("subscription read", func(t *testing.T) {
		sub, err := c.Subscription(ctx, "sub_123")
		if err != nil {
			t.Fatal(err)
		}
		// stripe-mock answers a canned subscription under the asked id.
		if sub.ID != "sub_123" || sub.Status == "" || sub.CustomerID == "" || sub.PriceID == "" {
			t.Fatalf("subscription %+v", sub)
		}
		if got := srv.Recorder.Requests("/v1/subscriptions/sub_123"); len(got) != 1 || got[0].Method != "GET" {
			t.Fatalf("requests %+v", got)
		}
	})
}

func TestUnconfiguredClientRefusesStripeCalls(t *testing.T) {
	ctx := context.Background()
	for name, c := range map[string]*billing.Client{
		"nil":           nil,
		"empty":         billing.New(billing.Config{}),
		"no prices":     billing.New(billing.Config{SecretKey: "sk_test_123"}),
		"no secret key": billing.New(billing.Config{PricePro: "price_pro", PriceBusiness: "price_business"}),
	} {
		if c.Configured() {
			t.Errorf("%s: configured", name)
		}
		if _, err := c.CreateCheckoutSession(ctx, billing.CheckoutInput{OrgID: "o", Plan: plans.Pro}); !errors.Is(err, billing.ErrNotConfigured) {
			t.Errorf("%s: checkout err %v", name, err)
		}
		if _, err := c.CreatePortalSession(ctx, "cus_1", ""); !errors.Is(err, billing.ErrNotConfigured) {
			t.Errorf("%s: portal err %v", name, err)
		}
		if _, err := c.Subscription(ctx, "sub_1"); !errors.Is(err, billing.ErrNotConfigured) {
			t.Errorf("%s: subscription err %v", name, err)
		}
	}
}
