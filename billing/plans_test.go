package billing_test

import (
	"testing"

	"github.com/expd/expd/billing"
	"github.com/expd/expd/plans"
)

func TestEffectivePlanFollowsStatus(t *testing.T) {
	cases := []struct {
		status     string
		want       plans.Name
		withNotice bool
	}{
		{"active", plans.Business, false},
		{"trialing", plans.Business, false},
		{"past_due", plans.Business, true},
		{"canceled", plans.Free, false},
		{"unpaid", plans.Free, false},
		{"incomplete", plans.Free, false},
		{"incomplete_expired", plans.Free, false},
		{"paused", plans.Free, false},
		{"", plans.Free, false},
	}
	for _, tc := range cases {
		got, notice := billing.EffectivePlan(tc.status, plans.Business)
		if got != tc.want || (notice != "") != tc.withNotice {
			t.Errorf("EffectivePlan(%q) = %q, %q; want %q, notice %v", tc.status, got, notice, tc.want, tc.withNotice)
		}
	}
}

func TestLiveSubscriptionsBlockCheckout(t *testing.T) {
	for status, want := range map[string]bool{
		"": false, "canceled": false, "incomplete_expired": false,
		"active": true, "trialing": true, "past_due": true, "unpaid": true, "incomplete": true, "paused": true,
	} {
		if got := billing.Live(status); got != want {
			t.Errorf("Live(%q) = %v, want %v", status, got, want)
		}
	}
}

func TestPlanForPriceKnowsOnlyConfiguredPrices(t *testing.T) {
	c := billing.New(billing.Config{PricePro: "price_pro", PriceBusiness: "price_business"})
	for price, want := range map[string]plans.Name{"price_pro": plans.Pro, "price_business": plans.Business} {
		if got, ok := c.PlanForPrice(price); !ok || got != want {
			t.Errorf("PlanForPrice(%q) = %q, %v", price, got, ok)
		}
	}
	for _, price := range []string{"", "price_other"} {
		if got, ok := c.PlanForPrice(price); ok {
			t.Errorf("PlanForPrice(%q) = %q", price, got)
		}
	}
	var none *billing.Client
	if _, ok := none.PlanForPrice("price_pro"); ok {
		t.Error("nil client maps a price")
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{
		"STRIPE_SECRET_KEY": "sk_test_1", "STRIPE_WEBHOOK_SECRET": "whsec_1",
		"STRIPE_PRICE_PRO": "price_p", "STRIPE_PRICE_BUSINESS": " price_b ",
		"STRIPE_API_BASE": "http://127.0.0.1:12111", "EXPD_DASHBOARD_ORIGINS": "https://a.example/, http://localhost:3000,,",
	}
	cfg := billing.ConfigFromEnv(func(k string) string { return env[k] })
	if cfg.SecretKey != "sk_test_1" || cfg.WebhookSecret != "whsec_1" || cfg.PricePro != "price_p" ||
		cfg.PriceBusiness != "price_b" || cfg.APIBase != "http://127.0.0.1:12111" {
		t.Fatalf("config %+v", cfg)
	}
	if len(cfg.ReturnOrigins) != 2 || cfg.ReturnOrigins[0] != "https://a.example" || cfg.ReturnOrigins[1] != "http://localhost:3000" {
		t.Fatalf("origins %q", cfg.ReturnOrigins)
	}
}

func TestCheckReturnURL(t *testing.T) {
	c := billing.New(billing.Config{ReturnOrigins: []string{"https://app.example", "http://localhost:3000"}})
	for _, ok := range []string{"https://app.example/billing?done=1", "http://localhost:3000/x"} {
		if err := c.CheckReturnURL(ok); err != nil {
			t.Errorf("CheckReturnURL(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "/billing", "https://evil.example/billing", "http://app.example/billing",
		"https://app.example.evil.example/", "javascript:alert(1)", "https://user@app.example/", "https://app.example:8443/"} {
		if err := c.CheckReturnURL(bad); err == nil {
			t.Errorf("CheckReturnURL(%q) accepted", bad)
		}
	}
	if err := billing.New(billing.Config{}).CheckReturnURL("https://app.example/"); err == nil {
		t.Error("accepted a URL with no origins configured")
	}
}
