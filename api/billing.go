package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/billing"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/validate"
)

// BillingSummary is the body of GET /v1/billing/summary.
type BillingSummary = billing.Summary

// HostedURL is the spec's HostedUrl: where to send the browser.
type HostedURL struct {
	URL string `json:"url"`
}

func (h *handlers) billingSummary(c *gin.Context) {
	org, ok := h.currentOrg(c)
	if !ok {
		return
	}
	customer := ""
	if org.StripeCustomerID != nil {
		customer = *org.StripeCustomerID
	}
	sum := h.deps.Billing.Summarize(string(org.Plan), org.SubscriptionStatus, customer)
	c.JSON(http.StatusOK, sum)
}

type checkoutRequest struct {
	Plan       string `json:"plan"`
	SuccessURL string `json:"success_url"`
	CancelURL  string `json:"cancel_url"`
}

func (h *handlers) createCheckoutSession(c *gin.Context) {
	if !h.requireBilling(c) {
		return
	}
	var req checkoutRequest
	if !decodeJSON(c, &req) {
		return
	}
	plan, err := h.checkCheckout(req)
	if err != nil {
		invalid(c, err)
		return
	}
	org, ok := h.currentOrg(c)
	if !ok {
		return
	}
	if billing.Live(org.SubscriptionStatus) {
		problem(c, http.StatusConflict, CodeSubscriptionExists,
			"the org already has a "+org.SubscriptionStatus+" subscription; change plans or fix payment in the billing portal")
		return
	}
	in := billing.CheckoutInput{OrgID: org.ID, Plan: plan, SuccessURL: req.SuccessURL, CancelURL: req.CancelURL}
	if org.StripeCustomerID != nil {
		in.CustomerID = *org.StripeCustomerID
	}
	url, err := h.deps.Billing.CreateCheckoutSession(c.Request.Context(), in)
	if err != nil {
		h.providerFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, HostedURL{URL: url})
}

func (h *handlers) checkCheckout(req checkoutRequest) (plans.Name, error) {
	var errs validate.Errors
	plan, err := plans.Parse(req.Plan)
	if err != nil || !plans.Purchasable(plan) {
		errs.Add("plan", "must be %q or %q", plans.Pro, plans.Business)
	}
	if err := h.deps.Billing.CheckReturnURL(req.SuccessURL); err != nil {
		errs.Add("success_url", "%v", err)
	}
	if err := h.deps.Billing.CheckReturnURL(req.CancelURL); err != nil {
		errs.Add("cancel_url", "%v", err)
	}
	return plan, errs.Err()
}

type portalRequest struct {
	ReturnURL string `json:"return_url"`
}

// createPortalSession takes an optional body {"return_url"}; without one
// the portal's configured default return link applies.
func (h *handlers) createPortalSession(c *gin.Context) {
	if !h.requireBilling(c) {
		return
	}
	var req portalRequest
	if c.Request.ContentLength != 0 && !decodeJSON(c, &req) {
		return
	}
	if req.ReturnURL != "" {
		if err := h.deps.Billing.CheckReturnURL(req.ReturnURL); err != nil {
			invalid(c, validate.New("return_url", "%v", err))
			return
		}
	}
	org, ok := h.currentOrg(c)
	if !ok {
		return
	}
	if org.StripeCustomerID == nil || *org.StripeCustomerID == "" {
		problem(c, http.StatusConflict, CodeNoBillingAccount, "the org has no billing account yet; buy a plan through checkout first")
		return
	}
	url, err := h.deps.Billing.CreatePortalSession(c.Request.Context(), *org.StripeCustomerID, req.ReturnURL)
	if err != nil {
		h.providerFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, HostedURL{URL: url})
}

// requireBilling answers 409 when this environment has no billing: the
// request is fine, the server cannot do it (documented in docs/billing.md).
func (h *handlers) requireBilling(c *gin.Context) bool {
	if !h.deps.Billing.Configured() {
		problem(c, http.StatusConflict, CodeBillingNotConfigured, "billing is not configured on this environment")
		return false
	}
	return true
}

func (h *handlers) currentOrg(c *gin.Context) (orgs.Org, bool) {
	org, err := orgs.Get(c.Request.Context(), h.deps.DB, orgID(c))
	if err != nil {
		internalError(c, err)
		return org, false
	}
	return org, true
}

// providerFailed answers a failed Stripe call: the request was fine, the
// upstream was not.
func (h *handlers) providerFailed(c *gin.Context, err error) {
	h.deps.Logger.ErrorContext(c.Request.Context(), "payment provider call failed", "request_id", requestID(c), "error", err)
	problem(c, http.StatusBadGateway, CodePaymentProviderError, "the payment provider did not complete the request; retry later")
}
