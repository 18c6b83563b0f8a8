package sdkcache

import "sync"

// Pins remembers assignment pins this instance has read or written. A pin
// never changes once recorded (the first one wins), so a cached pin is
// always right and needs no revalidation; absent pins are never cached,
// because another instance or an exposure may record one at any time.
type Pins struct {
	max int

	mu   sync.RWMutex
	pins map[pinKey]string
}

type pinKey struct{ experimentID, userID string }

// Get returns the cached pin of a user, or "" when none is cached.
func (p *Pins) Get(experimentID, userID string) string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.pins[pinKey{experimentID, userID}]
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
	p.pins[pinKey{experimentID, userID}] = variant
}
