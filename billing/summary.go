package billing

import "github.com/expd/expd/plans"

// Summary is the spec's BillingSummary, plus the plan's limits and a
// notice while a past-due subscription keeps its plan. The API route and
// the dashboard's billing page both build it with Summarize.
type Summary struct {
	Plan               plans.Name  `json:"plan"`
	HasBillingAccount  bool        `json:"has_billing_account"`
	BillingConfigured  bool        `json:"billing_configured"`
	SubscriptionStatus *string     `json:"subscription_status"` // null: never subscribed
	Notice             string      `json:"notice,omitempty"`
	Limits             plans.Limit `json:"limits"`
}

// Summarize is the summary of an org on plan with the given subscription
// status ("" when never subscribed) and Stripe customer id ("" when none).
func (c *Client) Summarize(plan, subscriptionStatus, customerID string) Summary {
	limits := plans.Get(plans.Name(plan))
	sum := Summary{
		Plan:              limits.Plan,
		HasBillingAccount: customerID != "",
		BillingConfigured: c.Configured(),
		Limits:            limits,
	}
	if subscriptionStatus != "" {
		sum.SubscriptionStatus = &subscriptionStatus
		_, sum.Notice = EffectivePlan(subscriptionStatus, limits.Plan)
	}
	return sum
}
