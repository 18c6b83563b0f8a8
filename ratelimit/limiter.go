package ratelimit

import (
	"sync"
	"time"

	"github.com/expd/expd/plans"
)

// Limiter holds one token bucket per key (route family and org), kept by
// its store: the memory of this process (New) or a Redis shared by every
// API instance (NewRedis). The rates, the overrides and the answers are
// the same with either store.
type Limiter struct {
	rates map[plans.Name]Rate
	store store
}

// store takes one token from a key's bucket of rate r; when none is left
// it says how long until one will be.
type store interface {
	take(key string, r Rate) (bool, time.Duration)
	close() error
}

// New returns an in-memory limiter with the plan table's rates, replaced
// by overrides where given (see ParseOverrides). now may be nil.
func New(overrides Overrides, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return newLimiter(overrides, &memory{now: now})
}

func newLimiter(overrides Overrides, s store) *Limiter {
	rates := make(map[plans.Name]Rate)
	for _, l := range plans.All() {
		rates[l.Plan] = Rate{PerSecond: l.RequestsPerSecond, Burst: l.Burst}
		if r, ok := overrides[l.Plan]; ok {
			rates[l.Plan] = r
		}
	}
	return &Limiter{rates: rates, store: s}
}

// RateOf returns the rate that applies to a plan.
func (l *Limiter) RateOf(plan plans.Name) Rate { return l.rates[plans.Get(plan).Plan] }

// Allow takes a token from the key's bucket. When the bucket is empty it
// returns false and how long until the next token.
func (l *Limiter) Allow(key string, plan plans.Name) (bool, time.Duration) {
	r := l.RateOf(plan)
	if r.Unlimited() {
		return true, 0
	}
	return l.store.take(key, r)
}

// Close releases the store's connections (none for the in-memory store).
func (l *Limiter) Close() error { return l.store.close() }

// memory keeps the buckets in this process. Buckets are a few dozen bytes
// and there is one per key that has made a request, so they are kept for
// the life of the process.
type memory struct {
	now     func() time.Time
	buckets sync.Map // key -> *bucket
}

func (m *memory) take(key string, r Rate) (bool, time.Duration) {
	b, ok := m.buckets.Load(key)
	if !ok {
		b, _ = m.buckets.LoadOrStore(key, &bucket{})
	}
	return b.(*bucket).take(r, m.now())
}

func (m *memory) close() error { return nil }
