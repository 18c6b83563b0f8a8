package ratelimit

import (
	"sync"
	"time"

	"github.com/expd/expd/plans"
)

// Limiter holds one token bucket per org. Buckets are a few dozen bytes
// and there is one per org that has made a request, so they are kept for
// the life of the process.
type Limiter struct {
	rates   map[plans.Name]Rate
	now     func() time.Time
	buckets sync.Map // org id -> *bucket
}

// New returns a limiter with the plan table's rates, replaced by
// overrides where given (see ParseOverrides). now may be nil.
func New(overrides Overrides, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	rates := make(map[plans.Name]Rate)
	for _, l := range plans.All() {
		rates[l.Plan] = Rate{PerSecond: l.RequestsPerSecond, Burst: l.Burst}
		if r, ok := overrides[l.Plan]; ok {
			rates[l.Plan] = r
		}
	}
	return &Limiter{rates: rates, now: now}
}

// RateOf returns the rate that applies to a plan.
func (l *Limiter) RateOf(plan plans.Name) Rate { return l.rates[plans.Get(plan).Plan] }

// Allow takes a token from the org's bucket. When the bucket is empty it
// returns false and how long until the next token.
func (l *Limiter) Allow(orgID string, plan plans.Name) (bool, time.Duration) {
	r := l.RateOf(plan)
	if r.Unlimited() {
		return true, 0
	}
	b, ok := l.buckets.Load(orgID)
	if !ok {
		b, _ = l.buckets.LoadOrStore(orgID, &bucket{})
	}
	return b.(*bucket).take(r, l.now())
}
