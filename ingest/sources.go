package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/expd/expd/assignments"
	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/holdouts"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/privacy"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/sdkcache"
	"github.com/expd/expd/vocab"
)

// ErrUnknownExperiment: a single event names no experiment of the org.
var ErrUnknownExperiment = errors.New("no experiment with this id or name in the org")

// Sources runs the whole ingest sequence of each source (the org's cached
// snapshot, prepare against its experiments, write) in one call, so the
// API's handlers only decode and answer.
type Sources struct {
	DB     *gorm.DB
	Writer *Writer
}

// Live stores a batch of POST /v1/events, as sent by the SDKs: events up
// to LiveMaxAge old, decoded (errs[i] is event i's decoding error; errs
// nil: none failed). Events refused by validation are in the Prepared's
// Rejected and are not written.
func (s Sources) Live(ctx context.Context, snap *sdkcache.Snapshot, evs []Event, errs []error) (Prepared, Outcome, error) {
	return s.live(ctx, snap, evs, errs, false)
}

// Spans stores the model calls of an OTLP trace export (otlp.ModelCalls)
// like Live, but whole or not at all: when validation refuses any event,
// the Prepared's Rejected says why and nothing is written (an exporter
// does not resend a refused export, so the team must see it refused).
func (s Sources) Spans(ctx context.Context, snap *sdkcache.Snapshot, evs []Event) (Prepared, Outcome, error) {
	return s.live(ctx, snap, evs, nil, true)
}

func (s Sources) live(ctx context.Context, snap *sdkcache.Snapshot, evs []Event, errs []error, whole bool) (Prepared, Outcome, error) {
	p := Preparer{
		OrgID:    snap.OrgID,
		Window:   Window{Now: time.Now(), MaxAge: LiveMaxAge},
		Source:   SourceAPI,
		Lookup:   s.snapshotLookup(ctx, snap),
		Holdouts: s.holdoutLookup(ctx, snap),
		Privacy:  PrivacyOf(snap),
	}
	prep, err := p.prepare(evs, errs)
	if err != nil || (whole && len(prep.Rejected) > 0) {
		return prep, Outcome{}, err
	}
	out, err := s.Writer.Write(ctx, Batch{Tenant: TenantOf(snap), Rows: prep.Rows})
	return prep, out, err
}

// Business stores one verified business event that passed Check against
// window; ErrUnknownExperiment when it names no experiment of the org.
func (s Sources) Business(ctx context.Context, snap *sdkcache.Snapshot, ev Event, window Window) (Outcome, error) {
	p := Preparer{OrgID: snap.OrgID, Window: window, Source: SourceWebhook, Lookup: s.snapshotLookup(ctx, snap), Privacy: PrivacyOf(snap)}
	prep, err := p.PrepareEvents([]Event{ev})
	if err != nil {
		return Outcome{}, err
	}
	if len(prep.Rows) == 0 {
		return Outcome{}, ErrUnknownExperiment
	}
	return s.Writer.Write(ctx, Batch{Tenant: TenantOf(snap), Rows: prep.Rows})
}

// Import streams an NDJSON import into one transaction, with timestamps as
// far back as the retention in force (privacy.RetentionDays: the shorter
// of the plan's and the org's retention_days), so an import stores
// nothing the next purge removes.
func (s Sources) Import(ctx context.Context, snap *sdkcache.Snapshot, body io.Reader) (ImportResult, error) {
	tenant := TenantOf(snap)
	days, err := privacy.RetentionDays(ctx, s.DB, tenant.OrgID, plans.Get(tenant.Plan).RetentionDays)
	if err != nil {
		return ImportResult{}, err
	}
	// All of the org's experiments, once: lines resolve against memory.
	refs, err := LookupExperiments(ctx, s.DB, tenant.OrgID, nil)
	if err != nil {
		return ImportResult{}, err
	}
	held, err := holdouts.Store{DB: s.DB}.Known(ctx, tenant.OrgID, nil)
	if err != nil {
		return ImportResult{}, err
	}
	p := Preparer{
		OrgID:    tenant.OrgID,
		Window:   Window{Now: time.Now(), MaxAge: time.Duration(days) * 24 * time.Hour},
		Source:   SourceImport,
		Lookup:   func([]string) (Refs, error) { return refs, nil },
		Holdouts: func([]string) (map[string]bool, error) { return held, nil },
		Privacy:  PrivacyOf(snap),
	}
	return s.Writer.Import(ctx, tenant, body, p)
}

// PrivacyOf is the payload policy of a snapshot's org and experiments.
// An experiment the snapshot does not know yet (created within the
// cache's max age on another instance) gets the org's policy until the
// snapshot is rebuilt, like any change of the policy (docs/privacy.md).
func PrivacyOf(snap *sdkcache.Snapshot) Privacy {
	return Privacy{Payload: snap.Payload, Experiment: func(id string) privacy.Policy {
		if e, ok := snap.Find(id); ok {
			return e.PayloadPolicy
		}
		return ""
	}}
}

// TenantOf is the write path's view of an org's snapshot.
func TenantOf(snap *sdkcache.Snapshot) Tenant {
	return Tenant{OrgID: snap.OrgID, Plan: snap.Plan}
}

// holdoutLookup resolves holdout ids from the org's cached snapshot, and
// from the database for ids it does not know (a holdout created within
// the cache's max age, or a typo).
func (s Sources) holdoutLookup(ctx context.Context, snap *sdkcache.Snapshot) HoldoutLookup {
	return func(ids []string) (map[string]bool, error) {
		known := make(map[string]bool, len(ids))
		var missing []string
		for _, id := range ids {
			if snap.Holdout(id) {
				known[id] = true
			} else {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			return known, nil
		}
		fresh, err := holdouts.Store{DB: s.DB}.Known(ctx, snap.OrgID, missing)
		for id := range fresh {
			known[id] = true
		}
		return known, err
	}
}

// snapshotLookup resolves experiment refs from the org's cached snapshot,
// and from the database for refs the snapshot does not know yet (an
// experiment created within the cache's max age).
func (s Sources) snapshotLookup(ctx context.Context, snap *sdkcache.Snapshot) Lookup {
	return func(refs []string) (Refs, error) {
		known := make(Refs, len(refs))
		var missing []string
		for _, r := range refs {
			if e, ok := snap.Find(r); ok {
				known[r] = e.ID
			} else {
				missing = append(missing, r)
			}
		}
		if len(missing) == 0 {
			return known, nil
		}
		fresh, err := LookupExperiments(ctx, s.DB, snap.OrgID, missing)
		if err != nil {
			return nil, err
		}
		for ref, id := range fresh {
			known[ref] = id
		}
		return known, nil
	}
}

// Scores checks a batch of POST /v1/scores against the live window (one
// bad score refuses the batch: a validation error naming its fields,
// scores.CheckAll) and stores it. humanOnly (a publishable key) refuses
// scores of another source with ErrScoreSource wrapping the fields.
func (s Sources) Scores(ctx context.Context, snap *sdkcache.Snapshot, batch []scores.Score, humanOnly bool) (Outcome, error) {
	w := scores.Window{Now: time.Now(), MaxAge: LiveMaxAge, Ahead: MaxAhead}
	rows, err := scores.CheckAll(batch, snap.OrgID, w)
	if err != nil {
		return Outcome{}, err
	}
	for i := range rows {
		rows[i].Comment = snap.Payload.Comment(rows[i].Comment)
	}
	if humanOnly {
		if err := scores.HumanOnly(rows); err != nil {
			return Outcome{}, fmt.Errorf("%w: %w", ErrScoreSource, err)
		}
	}
	return s.Writer.Write(ctx, Batch{Tenant: TenantOf(snap), Scores: rows})
}

// ErrScoreSource: a publishable key sent a score of a source other than
// human.
var ErrScoreSource = errors.New("a publishable key may send human scores only")

// HoldoutExposures records, for a decision POST /v1/assign made, the
// user's membership in each holdout whose step it evaluated: one exposure
// per user and holdout (docs/targeting.md, "Holdout exposures"). The first
// exposure of a holdout pins the user in it like any exposure, so a stored
// pin means it is recorded already.
func (s Sources) HoldoutExposures(ctx context.Context, snap *sdkcache.Snapshot, pins assignments.PinCache, userID string, ms []bucketing.Membership) error {
	var evs []Event
	for _, m := range ms {
		pin, err := assignments.ReadPin(ctx, s.DB, pins, m.HoldoutID, userID)
		if err != nil {
			return err
		}
		if pin != "" {
			continue
		}
		variant, version := m.Variant, snap.ConfigVersion
		evs = append(evs, Event{EventID: uuid.NewString(), Type: vocab.TypeExposure, ExperimentID: m.HoldoutID, UserID: userID,
			Timestamp: time.Now().UTC().Format(time.RFC3339Nano), Variant: &variant, ConfigVersion: &version})
	}
	if len(evs) == 0 {
		return nil
	}
	prep, _, err := s.Live(ctx, snap, evs, nil)
	if err == nil && len(prep.Rejected) > 0 {
		err = fmt.Errorf("holdout exposure of user refused: %s", prep.Rejected[0].Reason)
	}
	return err
}
