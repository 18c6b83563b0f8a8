package dashboard

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/billing"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/plans"
)

type billingData struct {
	billing.Summary
	Plans   []plans.Limit
	Live    bool // a live subscription: checkout would answer 409
	Message string
	Error   string
}

// GET /billing: plan, subscription and limits for everyone; checkout and
// portal buttons for admins, disabled with the reason when they cannot
// work here.
func (d *Dashboard) billingPage(c *gin.Context) {
	d.showBilling(c, http.StatusOK, billingMessage(c.Query("checkout")), "")
}

func billingMessage(checkout string) string {
	switch checkout {
	case "success":
		return "Payment received. Your plan changes as soon as the payment provider confirms it (usually within a minute)."
	case "cancel":
		return "Checkout canceled; nothing was charged."
	}
	return ""
}

func (d *Dashboard) showBilling(c *gin.Context, status int, message, problem string) {
	org, ok := d.org(c)
	if !ok {
		return
	}
	data := billingData{Summary: d.deps.Billing.Summarize(string(org.Plan), org.SubscriptionStatus, customerOf(org)),
		Plans: plans.All(), Live: billing.Live(org.SubscriptionStatus), Message: message, Error: problem}
	d.render(c, status, "billing", "Billing", "billing", data)
}

// POST /billing/checkout plan=pro|business (admins): the payment
// provider's checkout, with this page as the return address.
func (d *Dashboard) checkout(c *gin.Context) {
	org, ok := d.org(c)
	if !ok {
		return
	}
	plan, err := plans.Parse(c.PostForm("plan"))
	switch {
	case !d.deps.Billing.Configured():
		d.showBilling(c, http.StatusConflict, "", "Billing is not configured on this server.")
		return
	case err != nil || !plans.Purchasable(plan):
		d.showBilling(c, http.StatusBadRequest, "", "Choose the pro or the business plan.")
		return
	case billing.Live(org.SubscriptionStatus):
		d.showBilling(c, http.StatusConflict, "", "Your organization already has a "+org.SubscriptionStatus+
			" subscription, so a second checkout is refused (you would pay twice). Change plans, update the card or cancel in the billing portal.")
		return
	}
	base := origin(c.Request)
	in := billing.CheckoutInput{OrgID: org.ID, Plan: plan, SuccessURL: base + "/billing?checkout=success", CancelURL: base + "/billing?checkout=cancel", CustomerID: customerOf(org)}
	if err := d.deps.Billing.CheckReturnURL(in.SuccessURL); err != nil {
		d.showBilling(c, http.StatusConflict, "", "This dashboard's address ("+base+") is not in EXPD_DASHBOARD_ORIGINS, so the payment provider could not send you back here. Ask your operator to add it.")
		return
	}
	url, err := d.deps.Billing.CreateCheckoutSession(c.Request.Context(), in)
	if err != nil {
		d.deps.Logger.ErrorContext(c.Request.Context(), "dashboard checkout", "error", err)
		d.showBilling(c, http.StatusBadGateway, "", "The payment provider did not open a checkout. Try again in a few minutes.")
		return
	}
	c.Redirect(http.StatusSeeOther, url)
}

// POST /billing/portal (admins): the payment provider's customer portal.
func (d *Dashboard) portal(c *gin.Context) {
	org, ok := d.org(c)
	if !ok {
		return
	}
	switch {
	case !d.deps.Billing.Configured():
		d.showBilling(c, http.StatusConflict, "", "Billing is not configured on this server.")
		return
	case customerOf(org) == "":
		d.showBilling(c, http.StatusConflict, "", "Your organization has no billing account yet: buy a plan through checkout first, then the portal manages it.")
		return
	}
	returnURL := origin(c.Request) + "/billing"
	if d.deps.Billing.CheckReturnURL(returnURL) != nil {
		returnURL = "" // the portal's configured default return link applies
	}
	url, err := d.deps.Billing.CreatePortalSession(c.Request.Context(), customerOf(org), returnURL)
	if err != nil {
		d.deps.Logger.ErrorContext(c.Request.Context(), "dashboard portal", "error", err)
		d.showBilling(c, http.StatusBadGateway, "", "The payment provider did not open the portal. Try again in a few minutes.")
		return
	}
	c.Redirect(http.StatusSeeOther, url)
}

func (d *Dashboard) org(c *gin.Context) (orgs.Org, bool) {
	org, err := orgs.Get(c.Request.Context(), d.deps.DB, orgID(c))
	if err != nil {
		d.fail(c, err)
		return org, false
	}
	return org, true
}

func customerOf(org orgs.Org) string {
	if org.StripeCustomerID == nil {
		return ""
	}
	return *org.StripeCustomerID
}

// origin is the scheme and host the browser used for this dashboard.
func origin(r *http.Request) string {
	scheme := "http"
	if secure(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
