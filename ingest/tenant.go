package ingest

import "github.com/expd/expd/plans"

// Tenant is what the write path needs to know about an org.
type Tenant struct {
	OrgID string
	Plan  plans.Name
}

// Allowance is the org's monthly event allowance (plans.Unlimited: none).
func (t Tenant) Allowance() int64 { return plans.Get(t.Plan).MonthlyEventAllowance }
