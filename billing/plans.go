package billing

import "github.com/expd/expd/plans"

// Subscription statuses (Stripe's values) with a meaning of their own here.
const (
	StatusActive            = "active"
	StatusTrialing          = "trialing"
	StatusPastDue           = "past_due"
	StatusIncomplete        = "incomplete"
	StatusIncompleteExpired = "incomplete_expired"
	StatusUnpaid            = "unpaid"
	StatusCanceled          = "canceled"
	StatusPaused            = "paused"
)

// NoticePastDue is the grace note of a past-due subscription: the plan
// stays until Stripe's retries give up and the status turns unpaid or
// canceled.
const NoticePastDue = "payment is past due; the plan is kept while the payment provider retries the charge"

// PlanForPrice maps one of the configured prices to its plan. It works
// without the secret key, so events can be mapped when only prices are set.
func (c *Client) PlanForPrice(priceID string) (plans.Name, bool) {
	switch {
	case c == nil || priceID == "":
		return "", false
	case priceID == c.cfg.PricePro:
		return plans.Pro, true
	case priceID == c.cfg.PriceBusiness:
		return plans.Business, true
	}
	return "", false
}

// PricesConfigured tells whether this environment knows its prices, so
// that a price it cannot map is an error rather than a missing setting.
func (c *Client) PricesConfigured() bool {
	return c != nil && c.cfg.PricePro != "" && c.cfg.PriceBusiness != ""
}

func (c *Client) priceForPlan(p plans.Name) (string, bool) {
	switch p {
	case plans.Pro:
		return c.cfg.PricePro, c.cfg.PricePro != ""
	case plans.Business:
		return c.cfg.PriceBusiness, c.cfg.PriceBusiness != ""
	}
	return "", false
}

// Grants tells whether a subscription with status gives its plan: active,
// trialing and (on grace) past-due ones do; every other status (canceled,
// unpaid, incomplete, incomplete_expired, paused) leaves the org on free.
func Grants(status string) bool {
	switch status {
	case StatusActive, StatusTrialing, StatusPastDue:
		return true
	}
	return false
}

// EffectivePlan is the plan an org paying for paid gets while its
// subscription has status, with a note for the dashboard when the plan is
// kept on grace.
func EffectivePlan(status string, paid plans.Name) (plans.Name, string) {
	switch {
	case !Grants(status):
		return plans.Free, ""
	case status == StatusPastDue:
		return paid, NoticePastDue
	}
	return paid, ""
}

// Live tells whether a subscription with status still exists at the
// provider (so a new checkout would buy a second one; plan changes and
// payment fixes belong in the portal).
func Live(status string) bool {
	switch status {
	case "", StatusCanceled, StatusIncompleteExpired:
		return false
	}
	return true
}
