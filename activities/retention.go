package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/expd/expd/assignments"
	"github.com/expd/expd/evaluators"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/privacy"
	"github.com/expd/expd/results"
)

// ListOrgsInput pages through orgs by id.
type ListOrgsInput struct {
	AfterID string
	Limit   int
}

// RetentionOrg is an org and how long its plan keeps events.
type RetentionOrg struct {
	ID            string
	RetentionDays int
}

// ListOrgsResult is one page; Next is "" on the last page.
type ListOrgsResult struct {
	Orgs []RetentionOrg
	Next string
}

// ListOrgsForRetention returns one page of orgs with the retention in
// force: their plan's, or their privacy settings' shorter retention_days.
func (a *Activities) ListOrgsForRetention(ctx context.Context, in ListOrgsInput) (ListOrgsResult, error) {
	rows, err := orgs.Page(ctx, a.DB, in.AfterID, in.Limit)
	if err != nil {
		return ListOrgsResult{}, err
	}
	out := ListOrgsResult{Orgs: make([]RetentionOrg, len(rows))}
	for i, o := range rows {
		days, err := privacy.RetentionDays(ctx, a.DB, o.ID, plans.Get(plans.Name(o.Plan)).RetentionDays)
		if err != nil {
			return ListOrgsResult{}, err
		}
		out.Orgs[i] = RetentionOrg{ID: o.ID, RetentionDays: days}
	}
	if len(rows) == in.Limit {
		out.Next = rows[len(rows)-1].ID
	}
	return out, nil
}

// PurgeOrgInput says what to purge: events of the org older than AsOf
// minus RetentionDays, BatchSize rows per statement. AsOf comes from the
// workflow, so every retry purges up to the same cutoff.
type PurgeOrgInput struct {
	OrgID         string
	RetentionDays int
	AsOf          time.Time
	BatchSize     int
}

// PurgeOrgResult counts what was deleted, across retries of the activity.
type PurgeOrgResult struct {
	EventsDeleted int64
	RunsDeleted   int
	// The derived per-user data of the same age (docs/privacy.md,
	// "Retention"): scores, evaluations, pins of experiments not running.
	ScoresDeleted      int64
	EvaluationsDeleted int64
	PinsDeleted        int64
}

// PurgeExpired deletes an org's expired events in batches, then the
// scores, evaluations and pins (of experiments not running) older than
// the cutoff, then its nightly result runs older than the cutoff with the
// rollups (manual runs are never touched). Each batch commits on its own
// and the progress is heartbeated, so a retried attempt resumes where the
// last one stopped.
func (a *Activities) PurgeExpired(ctx context.Context, in PurgeOrgInput) (PurgeOrgResult, error) {
	cutoff := in.AsOf.UTC().AddDate(0, 0, -in.RetentionDays)
	var done PurgeOrgResult
	if activity.HasHeartbeatDetails(ctx) {
		// Counts of the previous attempt; what it deleted is gone already.
		_ = activity.GetHeartbeatDetails(ctx, &done)
	}
	for {
		n, err := a.events().PurgeBefore(ctx, in.OrgID, cutoff, in.BatchSize)
		if err != nil {
			return done, err
		}
		done.EventsDeleted += n
		activity.RecordHeartbeat(ctx, done)
		if n < int64(in.BatchSize) {
			break
		}
	}
	if err := a.purgeDerived(ctx, in.OrgID, cutoff, &done); err != nil {
		return done, err
	}
	activity.RecordHeartbeat(ctx, done)
	for {
		n, err := results.PurgeNightly(ctx, a.DB, in.OrgID, cutoff, in.BatchSize)
		if err != nil {
			return done, err
		}
		done.RunsDeleted += n
		activity.RecordHeartbeat(ctx, done)
		if n < in.BatchSize {
			return done, nil
		}
	}
}

// purgeDerived deletes the org's per-user data derived from events that is
// older than cutoff: scores, evaluations, and the pins of experiments that
// are not running (a running experiment's pins keep its users' variants).
func (a *Activities) purgeDerived(ctx context.Context, orgID string, cutoff time.Time, done *PurgeOrgResult) error {
	n, err := a.events().PurgeScoresBefore(ctx, orgID, cutoff)
	if err != nil {
		return err
	}
	done.ScoresDeleted += n
	if n, err = evaluators.PurgeBefore(ctx, a.DB, orgID, cutoff); err != nil {
		return err
	}
	done.EvaluationsDeleted += n
	running, err := experiments.Store{DB: a.DB}.List(ctx, orgID, experiments.StatusRunning)
	if err != nil {
		return err
	}
	keep := make([]string, len(running))
	for i, e := range running {
		keep[i] = e.ID
	}
	if n, err = assignments.PurgeBefore(ctx, a.DB, orgID, cutoff, keep); err != nil {
		return err
	}
	done.PinsDeleted += n
	return nil
}

// DropPartitionsInput fixes the instant of a retention run.
type DropPartitionsInput struct {
	AsOf time.Time
}

// DropPartitionsResult counts the whole days dropped.
type DropPartitionsResult struct {
	Partitions    int
	EventsDeleted int64
}

// DropExpiredPartitions drops each day partition of events that every org
// with rows in it has stopped retaining (docs/partitions.md): a day is
// whole when its end is at or before every such org's cutoff. Days still
// kept for some org stay; PurgeExpired deletes the other orgs' rows there.
// The days are the events store's (ingest.DayPartitions: PostgreSQL's or
// ClickHouse's partitions; SQLite has none). Dropping is idempotent, so a
// retry drops what is left.
func (a *Activities) DropExpiredPartitions(ctx context.Context, in DropPartitionsInput) (DropPartitionsResult, error) {
	var done DropPartitionsResult
	store, ok := a.events().(ingest.DayPartitions)
	if !ok {
		return done, nil
	}
	days, err := store.Days(ctx)
	if err != nil {
		return done, err
	}
	shortest := plans.All()[0].RetentionDays
	for _, l := range plans.All() {
		shortest = min(shortest, l.RetentionDays)
	}
	for _, day := range days {
		end := day.AddDate(0, 0, 1)
		if end.After(in.AsOf.UTC().AddDate(0, 0, -shortest)) {
			break // newer days are kept by every plan
		}
		orgIDs, err := store.DayOrgs(ctx, day)
		if err != nil {
			return done, err
		}
		expired, err := a.allExpired(ctx, orgIDs, end, in.AsOf)
		if err != nil || !expired {
			if err != nil {
				return done, err
			}
			continue
		}
		n, err := store.DropDay(ctx, day)
		if err != nil {
			return done, err
		}
		done.Partitions++
		done.EventsDeleted += n
		activity.RecordHeartbeat(ctx, done)
	}
	return done, nil
}

// allExpired tells whether every org's retention cutoff at asOf is at or
// after end.
func (a *Activities) allExpired(ctx context.Context, orgIDs []string, end, asOf time.Time) (bool, error) {
	if len(orgIDs) == 0 {
		return true, nil
	}
	rows, err := orgs.Plans(ctx, a.DB, orgIDs)
	if err != nil {
		return false, err
	}
	for _, o := range rows {
		if asOf.UTC().AddDate(0, 0, -plans.Get(plans.Name(o.Plan)).RetentionDays).Before(end) {
			return false, nil
		}
	}
	// An org without a row (deleted) keeps nothing.
	return true, nil
}
