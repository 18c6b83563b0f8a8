package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/expd/expd/api"
	"github.com/expd/expd/billing"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/plans"
)

const (
	checkoutPath = "/v1/billing/checkout-session"
	portalPath   = "/v1/billing/portal-session"
	summaryPath  = "/v1/billing/summary"
)

func checkoutBody(plan string) map[string]string {
	return map[string]string{"plan": plan, "success_url": "https://app.example/billing?ok=1", "cancel_url": "https://app.example/billing"}
}

// subscribe gives the org a customer and a subscription as a webhook would.
func subscribe(t *testing.T, env *testenv.Env, orgID, customer, status string) {
	t.Helper()
	err := env.DB.Table("orgs").Where("id = ?", orgID).
		Updates(map[string]any{"stripe_customer_id": customer, "stripe_subscription_id": "sub_" + orgID[:8], "subscription_status": status, "plan": "pro"}).Error
	if err != nil {
		t.Fatal(err)
	}
}

func TestCheckoutSessionAgainstStripeMock(t *testing.T) {
	t.Parallel()
	bc, stripe := stripeMockBilling(t)
	env := testenv.New(t, func(d *api.Deps) { d.Billing = bc })
	org := env.NewOrg(t)

	var hosted api.HostedURL
	env.Do(t, "POST", checkoutPath, checkoutBody("business"), testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusOK, &hosted)
	if !strings.HasPrefix(hosted.URL, "https://") {
		t.Fatalf("hosted url %q", hosted.URL)
	}
	sent := stripe.Recorder.Requests("/v1/checkout/sessions")
	if len(sent) != 1 {
		t.Fatalf("%d checkout requests", len(sent))
	}
	f := sent[0].Form
	for k, v := range map[string]string{
		"mode": "subscription", "line_items[0][price]": "price_business", "client_reference_id": org.ID,
		"metadata[org_id]": org.ID, "metadata[plan]": "business", "success_url": "https://app.example/billing?ok=1",
	} {
		if f.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, f.Get(k), v)
		}
	}
	if f.Has("customer") {
		t.Error("new org sent a customer")
	}

	// An org whose subscription ended buys again as the same customer.
	subscribe(t, env, org.ID, "cus_returning", "canceled")
	if r := env.Do(t, "POST", checkoutPath, checkoutBody("pro"), testenv.Bearer(org.AdminToken)...); r.Status != http.StatusOK {
		t.Fatalf("checkout again: %d %s", r.Status, r.Body)
	}
	sent = stripe.Recorder.Requests("/v1/checkout/sessions")
	if f := sent[len(sent)-1].Form; f.Get("customer") != "cus_returning" || f.Get("line_items[0][price]") != "price_pro" {
		t.Fatalf("second checkout sent %v", f)
	}
}

func TestCheckoutSessionRefusals(t *testing.T) {
	t.Parallel()
	bc, stripe := stripeMockBilling(t)
	env := testenv.New(t, func(d *api.Deps) { d.Billing = bc })
	org := env.NewOrg(t)

	p := testenv.ExpectProblem(t, env.Do(t, "POST", checkoutPath, checkoutBody("pro"), testenv.Bearer(org.MemberToken)...), http.StatusForbidden)
	if p.Code != "admin_required" {
		t.Errorf("member: code %q", p.Code)
	}
	testenv.ExpectProblem(t, env.Do(t, "POST", checkoutPath, checkoutBody("pro")), http.StatusUnauthorized)

	bad := map[string]string{"plan": "enterprise", "success_url": "https://evil.example/x", "cancel_url": "/relative"}
	p = testenv.ExpectProblem(t, env.Do(t, "POST", checkoutPath, bad, testenv.Bearer(org.AdminToken)...), http.StatusBadRequest)
	for _, field := range []string{"plan", "success_url", "cancel_url"} {
		if !p.HasFieldError(field) {
			t.Errorf("no field error for %s: %+v", field, p.Errors)
		}
	}
	testenv.ExpectProblem(t, env.Do(t, "POST", checkoutPath, "{not json", testenv.Bearer(org.AdminToken)...), http.StatusBadRequest)

	for _, status := range []string{"active", "past_due", "trialing"} {
		subscribe(t, env, org.ID, "cus_live", status)
		if p := testenv.ExpectProblem(t, env.Do(t, "POST", checkoutPath, checkoutBody("business"), testenv.Bearer(org.AdminToken)...), http.StatusConflict); p.Code != "subscription_exists" {
			t.Errorf("%s subscription: code %q", status, p.Code)
		}
	}
	if n := len(stripe.Recorder.Requests("/v1/checkout/sessions")); n != 0 {
		t.Fatalf("refused requests reached Stripe %d times", n)
	}
}

func TestPortalSessionAgainstStripeMock(t *testing.T) {
	t.Parallel()
	bc, stripe := stripeMockBilling(t)
	env := testenv.New(t, func(d *api.Deps) { d.Billing = bc })
	org := env.NewOrg(t)

	if p := testenv.ExpectProblem(t, env.Do(t, "POST", portalPath, nil, testenv.Bearer(org.AdminToken)...), http.StatusConflict); p.Code != "no_billing_account" {
		t.Fatalf("no customer: code %q", p.Code)
	}
	subscribe(t, env, org.ID, "cus_portal", "active")
	testenv.ExpectProblem(t, env.Do(t, "POST", portalPath, nil, testenv.Bearer(org.MemberToken)...), http.StatusForbidden)
	p := testenv.ExpectProblem(t, env.Do(t, "POST", portalPath, map[string]string{"return_url": "https://evil.example/"}, testenv.Bearer(org.AdminToken)...), http.StatusBadRequest)
	if !p.HasFieldError("return_url") {
		t.Fatalf("bad return_url: %+v", p)
	}

	var hosted api.HostedURL
	env.Do(t, "POST", portalPath, map[string]string{"return_url": "https://app.example/billing"}, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusOK, &hosted)
	sent := stripe.Recorder.Requests("/v1/billing_portal/sessions")
	if hosted.URL == "" || len(sent) != 1 || sent[0].Form.Get("customer") != "cus_portal" || sent[0].Form.Get("return_url") != "https://app.example/billing" {
		t.Fatalf("url %q, sent %+v", hosted.URL, sent)
	}
	if r := env.Do(t, "POST", portalPath, nil, testenv.Bearer(org.AdminToken)...); r.Status != http.StatusOK {
		t.Fatalf("portal without body: %d %s", r.Status, r.Body)
	}
	if f := stripe.Recorder.Requests("/v1/billing_portal/sessions")[1].Form; f.Has("return_url") {
		t.Fatalf("portal without return_url sent %v", f)
	}
}

func TestBillingNotConfigured(t *testing.T) {
	t.Parallel()
	for name, bc := range map[string]*billing.Client{"nil": nil, "webhook secret only": eventOnlyBilling()} {
		env := testenv.New(t, func(d *api.Deps) { d.Billing = bc })
		org := env.NewOrg(t)
		subscribe(t, env, org.ID, "cus_x", "canceled")
		for _, path := range []string{checkoutPath, portalPath} {
			if p := testenv.ExpectProblem(t, env.Do(t, "POST", path, checkoutBody("pro"), testenv.Bearer(org.AdminToken)...), http.StatusConflict); p.Code != "billing_not_configured" {
				t.Errorf("%s %s: code %q", name, path, p.Code)
			}
		}
		var sum api.BillingSummary
		env.Do(t, "GET", summaryPath, nil, testenv.Bearer(org.MemberToken)...).JSON(t, &sum)
		if sum.BillingConfigured {
			t.Errorf("%s: summary says billing is configured", name)
		}
	}
}

func TestBillingSummaryFollowsThePlan(t *testing.T) {
	t.Parallel()
	bc, _ := stripeMockBilling(t)
	env := testenv.New(t, func(d *api.Deps) { d.Billing = bc })
	org := env.NewOrg(t)

	r := env.Do(t, "GET", summaryPath, nil, testenv.Bearer(org.MemberToken)...)
	var raw map[string]any
	r.JSON(t, &raw)
	if r.Status != http.StatusOK || raw["plan"] != "free" || raw["has_billing_account"] != false || raw["billing_configured"] != true || raw["subscription_status"] != nil {
		t.Fatalf("fresh org summary: %d %s", r.Status, r.Body)
	}

	subscribe(t, env, org.ID, "cus_sum", "past_due")
	var sum api.BillingSummary
	env.Do(t, "GET", summaryPath, nil, testenv.Bearer(org.MemberToken)...).JSON(t, &sum)
	want := plans.Get(plans.Pro)
	if sum.Plan != plans.Pro || !sum.HasBillingAccount || sum.SubscriptionStatus == nil || *sum.SubscriptionStatus != "past_due" ||
		sum.Notice == "" || sum.Limits != want {
		t.Fatalf("past-due summary %+v, want limits %+v", sum, want)
	}
	testenv.ExpectProblem(t, env.Do(t, "GET", summaryPath, nil), http.StatusUnauthorized)
}
