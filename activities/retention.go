package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/expd/expd/models"
	"github.com/expd/expd/plans"
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

// ListOrgsForRetention returns one page of orgs with their plan's retention.
func (a *Activities) ListOrgsForRetention(ctx context.Context, in ListOrgsInput) (ListOrgsResult, error) {
	var rows []models.Org
	q := a.DB.WithContext(ctx).Select("id", "plan")
	if in.AfterID != "" { // "" is no UUID, so PostgreSQL cannot compare with it
		q = q.Where("id > ?", in.AfterID)
	}
	if err := q.Order("id").Limit(in.Limit).Find(&rows).Error; err != nil {
		return ListOrgsResult{}, fmt.Errorf("list orgs: %w", err)
	}
	out := ListOrgsResult{Orgs: make([]RetentionOrg, len(rows))}
	for i, o := range rows {
		out.Orgs[i] = RetentionOrg{ID: o.ID, RetentionDays: plans.Get(plans.Name(o.Plan)).RetentionDays}
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
}

// PurgeExpired deletes an org's expired events in batches, then its
// nightly result runs older than the cutoff (manual runs are never
// touched). Each batch commits on its own and the progress is
// heartbeated, so a retried attempt resumes where the last one stopped.
func (a *Activities) PurgeExpired(ctx context.Context, in PurgeOrgInput) (PurgeOrgResult, error) {
	cutoff := in.AsOf.UTC().AddDate(0, 0, -in.RetentionDays)
	var done PurgeOrgResult
	if activity.HasHeartbeatDetails(ctx) {
		// Counts of the previous attempt; what it deleted is gone already.
		_ = activity.GetHeartbeatDetails(ctx, &done)
	}
	for {
		res := a.DB.WithContext(ctx).Exec(`DELETE FROM events WHERE org_id = ? AND event_id IN (
  SELECT event_id FROM events WHERE org_id = ? AND ts < ? LIMIT ?)`, in.OrgID, in.OrgID, cutoff, in.BatchSize)
		if res.Error != nil {
			return done, fmt.Errorf("purge events of org %s before %s: %w", in.OrgID, cutoff.Format(time.RFC3339), res.Error)
		}
		done.EventsDeleted += res.RowsAffected
		activity.RecordHeartbeat(ctx, done)
		if res.RowsAffected < int64(in.BatchSize) {
			break
		}
	}
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
