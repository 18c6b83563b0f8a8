package erasure

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"github.com/expd/expd/secrets"
)

// TombstoneMaxAge is how long an instance's cached tombstones of an org
// serve before they are read again: an erasure requested on another
// instance is seen within it (one made in this process, at once). The
// events step of an erasure starts no earlier than this after the
// request (WaitForTombstone), so no instance stores the user's events
// after the step has deleted them because its cache was stale.
const TombstoneMaxAge = time.Second

// Tombstone is an erasure request as ingest checks it: the user's keyed
// hash and when it was requested.
type Tombstone struct {
	UserHash  string
	CreatedAt time.Time
}

// tombstonesSQL reads the org's tombstones requested since a time, on
// the erasures_org_hash index's org prefix (PostgreSQL's numbered
// parameters: org_id, since).
const tombstonesSQL = `SELECT user_hash, created_at FROM erasures WHERE org_id = $1 AND created_at >= $2`

// Recent reads the org's tombstones requested since since.
func Recent(ctx context.Context, db *gorm.DB, orgID string, since time.Time) ([]Tombstone, error) {
	var out []Tombstone
	if err := db.WithContext(ctx).Model(&Row{}).Select("user_hash", "created_at").
		Where("org_id = ? AND created_at >= ?", orgID, since.UTC()).Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("read tombstones of org %s: %w", orgID, err)
	}
	return out, nil
}

// PgxQuerier is a pgx transaction or connection.
type PgxQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// RecentPgx is Recent through pgx: the PostgreSQL write path reads in its
// own transaction, on the connection it holds.
func RecentPgx(ctx context.Context, q PgxQuerier, orgID string, since time.Time) ([]Tombstone, error) {
	rows, err := q.Query(ctx, tombstonesSQL, orgID, since.UTC())
	if err != nil {
		return nil, fmt.Errorf("read tombstones of org %s: %w", orgID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Tombstone, error) {
		var t Tombstone
		err := r.Scan(&t.UserHash, &t.CreatedAt)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("read tombstones of org %s: %w", orgID, err)
	}
	return out, nil
}

// Loader reads an org's tombstones requested since a time (Recent, or
// the write path's transaction's read).
type Loader func(ctx context.Context, orgID string, since time.Time) ([]Tombstone, error)

// generations counts, per org, the erasures this process created or
// completed: a cached set read before the count moved is read again.
var generations sync.Map // org id -> *atomic.Int64

func generation(orgID string) *atomic.Int64 {
	g, _ := generations.LoadOrStore(orgID, new(atomic.Int64))
	return g.(*atomic.Int64)
}

// changed tells this process's caches that the org's tombstones changed.
func changed(orgID string) { generation(orgID).Add(1) }

// Tombstones caches each org's recent tombstones, so that checking a
// batch of events reads the database only when the org's set is older
// than TombstoneMaxAge or an erasure of the org was created or completed
// in this process since it was read. The zero value is ready.
type Tombstones struct {
	entries sync.Map // org id -> *tombstoneEntry
}

type tombstoneEntry struct {
	mu  sync.Mutex // one read per org at a time
	set atomic.Pointer[tombstoneSet]
}

type tombstoneSet struct {
	generation int64
	read       time.Time            // monotonic: when the set was read
	since      time.Time            // the oldest request the read covered
	created    map[string]time.Time // user hash -> when requested
}

func (s *tombstoneSet) fresh(orgID string, since time.Time) bool {
	return s != nil && s.generation == generation(orgID).Load() &&
		time.Since(s.read) < TombstoneMaxAge && !since.Before(s.since)
}

// Erased returns which of userIDs of the org an erasure requested within
// TombstoneTTL before now names (their hashes under the current or,
// during a key rotation, the previous server key). load reads the org's
// tombstones when the cached set is stale; an org without tombstones
// costs no hashing. Nothing without a server key (no erasure can have
// been requested).
func (c *Tombstones) Erased(ctx context.Context, ring *secrets.Keyring, orgID string, userIDs []string, now time.Time, load Loader) (map[string]bool, error) {
	if !ring.Configured() || len(userIDs) == 0 {
		return nil, nil
	}
	since := now.Add(-TombstoneTTL)
	set, err := c.set(ctx, orgID, since, load)
	if err != nil || len(set.created) == 0 {
		return nil, err
	}
	var out map[string]bool
	for _, u := range userIDs {
		for _, h := range ring.MACs(macPurpose, u) {
			if at, ok := set.created[h]; ok && !at.Before(since) {
				if out == nil {
					out = map[string]bool{}
				}
				out[u] = true
			}
		}
	}
	return out, nil
}

// set returns the org's cached tombstones covering since, read again
// when stale.
func (c *Tombstones) set(ctx context.Context, orgID string, since time.Time, load Loader) (*tombstoneSet, error) {
	v, _ := c.entries.LoadOrStore(orgID, &tombstoneEntry{})
	e := v.(*tombstoneEntry)
	if s := e.set.Load(); s.fresh(orgID, since) {
		return s, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if s := e.set.Load(); s.fresh(orgID, since) {
		return s, nil // another batch read it while this one waited
	}
	// The generation is taken before the read: an erasure recorded
	// during it moves the count, and the next check reads again.
	s := &tombstoneSet{generation: generation(orgID).Load(), read: time.Now(), since: since}
	found, err := load(ctx, orgID, since)
	if err != nil {
		return nil, fmt.Errorf("look up erased users: %w", err)
	}
	s.created = make(map[string]time.Time, len(found))
	for _, t := range found {
		if at, ok := s.created[t.UserHash]; !ok || t.CreatedAt.After(at) {
			s.created[t.UserHash] = t.CreatedAt
		}
	}
	e.set.Store(s)
	return s, nil
}

// WaitForTombstone waits until every instance's cached tombstones have
// been read after the erasure's request (TombstoneMaxAge after it, at
// most TombstoneMaxAge from now), so events checked against a stale set
// are stored before the events step deletes them, not after.
func WaitForTombstone(ctx context.Context, requested time.Time) error {
	wait := min(time.Until(requested.Add(TombstoneMaxAge)), TombstoneMaxAge)
	if wait <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(wait):
		return nil
	}
}
