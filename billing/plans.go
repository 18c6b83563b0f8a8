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

func (c *Client) priceForPlan(p plans.Name) (string, bool) {
	switch p {
	case plans.Pro:
		return c.cfg.PricePro, c.cfg.PricePro != ""
	case plans.Business:
		return c.cfg.PriceBusiness, c.cfg.PriceBusiness != ""
	}
	return "", false
}

// EffectivePlan is the plan an org on paid plan gets while its subscription
// has status, with a note for the dashboard when the plan is kept on grace.
// Only active, trialing and past-due subscriptions grant the plan; every
// other status (canceled, unpaid, incomplete, incomplete_expired, paused,
// or a deleted subscription) leaves the org on free.
func EffectivePlan(status string, paid plans.Name) (plans.Name, string) {
	switch status {
	case StatusActive, StatusTrialing:
		return paid, ""
	case StatusPastDue:
		return paid, NoticePastDue
	}
	return plans.Free, ""
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
