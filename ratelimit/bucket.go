package ratelimit

import (
	"math"
	"sync"
	"time"
)

// Rate is a token bucket: PerSecond tokens are added each second, up to
// Burst. A request takes one token.
type Rate struct {
	PerSecond float64
	Burst     int
}

// Unlimited reports whether the rate lets everything through.
func (r Rate) Unlimited() bool { return math.IsInf(r.PerSecond, 1) }

type bucket struct {
	mu     sync.Mutex
	tokens float64
	last   time.Time
}

// take refills the bucket to now and takes a token. When none is left it
// says how long until one will be.
func (b *bucket) take(r Rate, now time.Time) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last.IsZero() {
		b.tokens = float64(r.Burst)
	} else if elapsed := now.Sub(b.last).Seconds(); elapsed > 0 {
		b.tokens = math.Min(float64(r.Burst), b.tokens+elapsed*r.PerSecond)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := (1 - b.tokens) / r.PerSecond
	return false, time.Duration(math.Ceil(wait * float64(time.Second)))
}
