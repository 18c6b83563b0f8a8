// Package plans is the one table of plan limits (docs/architecture.md §7). Every limit
// check (rate limits, event allowance, results pipeline) reads it.
package plans

import "fmt"

// Name of a plan.
type Name string

const (
	Free       Name = "free"
	Pro        Name = "pro"
	Business   Name = "business"
	Enterprise Name = "enterprise"
)

// Unlimited marks a limit with no ceiling.
const Unlimited int64 = -1

// Limit is the PlanLimit resource of the spec.
type Limit struct {
	Plan                  Name  `json:"plan"`
	RetentionDays         int   `json:"retention_days"`
	MaxPermutations       int   `json:"max_permutations"`
	MaxSamplePerArm       int   `json:"max_sample_per_arm"`
	MonthlyEventAllowance int64 `json:"monthly_event_allowance"` // -1: unlimited
	// RequestsPerSecond is the per-org rate of /v1/assign and /v1/events.
	RequestsPerSecond float64 `json:"requests_per_second"`
	Burst             int     `json:"burst"`
}

var table = []Limit{
	{Free, 30, 1_000, 10_000, 100_000, 50, 100},
	{Pro, 90, 10_000, 100_000, 5_000_000, 500, 1_000},
	{Business, 365, 50_000, 1_000_000, 50_000_000, 2_000, 4_000},
	{Enterprise, 730, 100_000, 10_000_000, Unlimited, 10_000, 20_000},
}

// All returns the limits of every plan, cheapest first.
func All() []Limit { return append([]Limit(nil), table...) }

// Get returns the limits of a plan; an unknown or empty name is free.
func Get(n Name) Limit {
	for _, l := range table {
		if l.Plan == n {
			return l
		}
	}
	return table[0]
}

// Parse validates a plan name.
func Parse(s string) (Name, error) {
	for _, l := range table {
		if string(l.Plan) == s {
			return l.Plan, nil
		}
	}
	return "", fmt.Errorf("unknown plan %q", s)
}

// Purchasable tells whether a plan is bought through checkout.
func Purchasable(n Name) bool { return n == Pro || n == Business }
