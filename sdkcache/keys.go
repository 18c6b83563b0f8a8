package sdkcache

import (
	"sync"
	"time"

	"github.com/expd/expd/auth"
)

// Keys caches live API keys by hash. Only keys found live in the database
// are remembered (unknown keys always go to the database), each for at most
// MaxAge, and a rotation makes the instance forget the org's keys at once.
type Keys struct {
	maxAge time.Duration
	now    func() time.Time

	mu         sync.RWMutex
	byHash     map[string]liveKey
	generation uint64 // raised by every Forget; see Remember
}

type liveKey struct {
	orgID   string
	scope   auth.Scope
	checked time.Time
}

// Lookup returns the org and scope of a cached live key.
func (k *Keys) Lookup(hash string) (orgID string, scope auth.Scope, ok bool) {
	k.mu.RLock()
	e, found := k.byHash[hash]
	k.mu.RUnlock()
	if !found || k.now().Sub(e.checked) >= k.maxAge {
		return "", "", false
	}
	return e.orgID, e.scope, true
}

// Ticket marks the start of a database lookup of a key.
type Ticket struct {
	generation uint64
	at         time.Time
}

// Begin is called before a database lookup whose result goes to Remember.
func (k *Keys) Begin() Ticket {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return Ticket{generation: k.generation, at: k.now()}
}

// Remember caches a key that the lookup begun with t found live. When a
// Forget ran since t, the key may have been revoked meanwhile, so it is
// not cached.
func (k *Keys) Remember(t Ticket, hash, orgID string, scope auth.Scope) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if t.generation != k.generation {
		return
	}
	k.byHash[hash] = liveKey{orgID: orgID, scope: scope, checked: t.at}
}

// ForgetOrg drops every cached key of an org (after one of its rotations).
func (k *Keys) ForgetOrg(orgID string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.generation++
	for h, e := range k.byHash {
		if e.orgID == orgID {
			delete(k.byHash, h)
		}
	}
}

// ForgetAll drops every cached key, when rotations may have been missed.
func (k *Keys) ForgetAll() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.generation++
	clear(k.byHash)
}
