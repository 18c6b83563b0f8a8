package sdkcache

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/assignments"
	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/holdouts"
	"github.com/expd/expd/layers"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/privacy"
	"github.com/expd/expd/secrets"
	"github.com/expd/expd/telemetry"
)

// refreshTimeout bounds one rebuild; it runs detached from the request that
// triggered it because concurrent requests of the org wait for it too.
const refreshTimeout = 5 * time.Second

// Configs caches one Snapshot per org.
type Configs struct {
	db      *gorm.DB
	secrets *secrets.Keyring // opens the orgs' hash keys (privacy.Load)
	store   experiments.Store
	maxAge  time.Duration
	now     func() time.Time
	entries sync.Map // org id -> *configEntry
}

type configEntry struct {
	refresh sync.Mutex // one revalidation per org at a time
	snap    atomic.Pointer[Snapshot]
	checked atomic.Int64 // unix nanos of the last validation against the database
}

// Get returns the org's snapshot, revalidating it when it is older than
// MaxAge: one query of the org's config_version and plan, and a rebuild
// only when either changed.
func (c *Configs) Get(ctx context.Context, orgID string) (*Snapshot, error) {
	e := c.entry(orgID)
	if s := e.snap.Load(); s != nil && c.fresh(e) {
		telemetry.ConfigCache.WithLabelValues(telemetry.Hit).Inc()
		return s, nil
	}
	e.refresh.Lock()
	defer e.refresh.Unlock()
	// Another request may have revalidated while this one waited.
	if s := e.snap.Load(); s != nil && c.fresh(e) {
		telemetry.ConfigCache.WithLabelValues(telemetry.Hit).Inc()
		return s, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
	defer cancel()
	return c.revalidate(ctx, orgID, e)
}

// Expire makes the next Get of the org revalidate at once. The API calls
// it after an experiment change so this instance serves the new config
// immediately; other instances see it within MaxAge.
func (c *Configs) Expire(orgID string) {
	c.entry(orgID).checked.Store(0)
}

func (c *Configs) entry(orgID string) *configEntry {
	if e, ok := c.entries.Load(orgID); ok {
		return e.(*configEntry)
	}
	e, _ := c.entries.LoadOrStore(orgID, &configEntry{})
	return e.(*configEntry)
}

func (c *Configs) fresh(e *configEntry) bool {
	return c.now().UnixNano()-e.checked.Load() < int64(c.maxAge)
}

func (c *Configs) revalidate(ctx context.Context, orgID string, e *configEntry) (*Snapshot, error) {
	checkedAt := c.now()
	var org struct {
		ConfigVersion int64
		Plan          string
	}
	err := c.db.WithContext(ctx).Model(&orgs.Org{}).Select("config_version", "plan").Where("id = ?", orgID).Take(&org).Error
	if err != nil {
		return nil, fmt.Errorf("read config_version of org %s: %w", orgID, err)
	}
	plan := plans.Get(plans.Name(org.Plan)).Plan
	if s := e.snap.Load(); s != nil && s.ConfigVersion == org.ConfigVersion && s.Plan == plan {
		e.checked.Store(checkedAt.UnixNano())
		telemetry.ConfigCache.WithLabelValues(telemetry.Revalidated).Inc()
		return s, nil
	}
	// The version was read before the experiments: a change committing in
	// between gives newer content under the older version, which the next
	// revalidation corrects; never older content under a newer version,
	// which clients would keep behind a matching ETag.
	list, err := c.store.List(ctx, orgID, "")
	if err != nil {
		return nil, fmt.Errorf("load config of org %s: %w", orgID, err)
	}
	sc, err := c.scopes(ctx, orgID)
	if err != nil {
		return nil, err
	}
	pins, err := c.pinsToKeep(ctx, list, sc)
	if err != nil {
		return nil, err
	}
	needHash := false
	for _, e := range list {
		needHash = needHash || e.PayloadPolicy == privacy.PolicyHash
	}
	payload, err := privacy.Load(ctx, c.db, c.secrets, orgID, needHash)
	if err != nil {
		return nil, err
	}
	s, err := newSnapshot(orgID, org.ConfigVersion, plan, list, pins, sc, payload)
	if err != nil {
		return nil, err
	}
	e.snap.Store(s)
	e.checked.Store(checkedAt.UnixNano())
	telemetry.ConfigCache.WithLabelValues(telemetry.Rebuilt).Inc()
	return s, nil
}

// pinsToKeep reads the pins of every running experiment whose weights have
// changed since version 1, that is targeted, or that a holdout covers, from
// which the snapshot builds the sticky filters (and the assigned filter
// that keeps pinned users in when the targeting, their attributes or a
// holdout change). Version 1 without targeting or holdout cannot have
// moved anyone, so it costs nothing.
func (c *Configs) pinsToKeep(ctx context.Context, list []experiments.Experiment, sc scopes) (map[string][]bucketing.PinnedUser, error) {
	pins := map[string][]bucketing.PinnedUser{}
	for i := range list {
		e := &list[i]
		if e.Status != experiments.StatusRunning || (e.Version <= 1 && !e.Targeted() && len(sc.holdoutsOf(e)) == 0) {
			continue
		}
		p, err := assignments.PinnedUsers(ctx, c.db, e.ID)
		if err != nil {
			return nil, err
		}
		pins[e.ID] = p
	}
	return pins, nil
}

// scopes reads the org's layers and holdouts.
func (c *Configs) scopes(ctx context.Context, orgID string) (scopes, error) {
	list, err := layers.Store{DB: c.db}.List(ctx, orgID)
	if err != nil {
		return scopes{}, fmt.Errorf("load layers of org %s: %w", orgID, err)
	}
	sc := scopes{layers: make(map[string]layers.Layer, len(list))}
	for _, l := range list {
		sc.layers[l.ID] = l
	}
	if sc.holdouts, err = (holdouts.Store{DB: c.db}).List(ctx, orgID); err != nil {
		return scopes{}, fmt.Errorf("load holdouts of org %s: %w", orgID, err)
	}
	return sc, nil
}
