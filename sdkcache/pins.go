package sdkcache

import (
	"sync"
	"time"
)

// Pins remembers assignment pins this instance has read or written. A pin
// never changes once recorded (the first one wins), so a cached pin is
// right while its row exists; absent pins are never cached, because
// another instance or an exposure may record one at any time. An entry is
// served for maxAge at most: an erasure deletes the user's pin rows on a
// worker, and no instance may keep the user's id and variant past that
// bound (docs/privacy.md).
type Pins struct {
	max    int
	maxAge time.Duration
	now    func() time.Time

	mu   sync.RWMutex
	pins map[pinKey]pinEntry
}

type pinKey struct{ experimentID, userID string }

type pinEntry struct {
	variant string
	at      time.Time
}

// Get returns the cached pin of a user, or "" when none is cached or the
// cached one is older than the max age (the caller then reads the row).
func (p *Pins) Get(experimentID, userID string) string {
	p.mu.RLock()
	e := p.pins[pinKey{experimentID, userID}]
	p.mu.RUnlock()
	if e.variant == "" || p.now().Sub(e.at) >= p.maxAge {
		return ""
	}
	return e.variant
}

// Put caches a pin read from or written to the database. When the cache
// is full an arbitrary pin is dropped: it is only read again from the
// database on the user's next assignment.
func (p *Pins) Put(experimentID, userID, variant string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.pins) >= p.max {
		for k := range p.pins {
			delete(p.pins, k)
			break
		}
	}
	p.pins[pinKey{experimentID, userID}] = pinEntry{variant: variant, at: p.now()}
}
