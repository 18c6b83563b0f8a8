package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/expd/expd/scores"
	"github.com/expd/expd/vocab"
)

// CallFilter selects an experiment's model calls for the call explorer
// (GET /v1/experiments/:id/calls). Zero fields do not filter.
type CallFilter struct {
	OrgID, ExperimentID string
	Variant, Model      string
	Error               *bool         // true: failed calls only; false: successful only
	Scored              *scores.Range // calls with a score in this range
	From, To            time.Time     // ts in [From, To)
	// Before is the keyset cursor: calls strictly older than (BeforeTs,
	// BeforeID) in the newest-first order.
	BeforeTs time.Time
	BeforeID string
	Limit    int
}

// ReadCalls is EventStore.ReadCalls on expd's own database.
func (s SQLEvents) ReadCalls(ctx context.Context, f CallFilter) ([]EventRow, error) {
	q := s.DB.WithContext(ctx).Where("org_id = ? AND experiment_id = ? AND type = ?", f.OrgID, f.ExperimentID, vocab.TypeModelCall)
	if f.Variant != "" {
		q = q.Where("variant = ?", f.Variant)
	}
	if f.Model != "" {
		q = q.Where("model = ?", f.Model)
	}
	if f.Error != nil {
		// An error is a non-empty error text (vocab.Indicator).
		if *f.Error {
			q = q.Where("error IS NOT NULL AND error <> ''")
		} else {
			q = q.Where("(error IS NULL OR error = '')")
		}
	}
	if f.Scored != nil {
		q = q.Where("event_id IN (?)", scores.CallsScored(s.DB, f.OrgID, *f.Scored))
	}
	if !f.From.IsZero() {
		q = q.Where("ts >= ?", f.From)
	}
	if !f.To.IsZero() {
		q = q.Where("ts < ?", f.To)
	}
	if f.BeforeID != "" {
		q = q.Where("(ts < ? OR (ts = ? AND event_id < ?))", f.BeforeTs, f.BeforeTs, f.BeforeID)
	}
	var rows []EventRow
	if err := q.Order("ts DESC, event_id DESC").Limit(f.Limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read model calls: %w", err)
	}
	return rows, nil
}

// NewCallsFilter selects model calls for an online evaluator: of the
// org's experiments (all of them when ExperimentIDs is empty), received
// after (AfterReceived, AfterID) and before ReceivedBefore (zero: no
// bound), and with ts in [From, To) when those are set (a backfill).
type NewCallsFilter struct {
	OrgID          string
	ExperimentIDs  []string
	AfterReceived  time.Time
	AfterID        string
	ReceivedBefore time.Time
	From, To       time.Time
	Limit          int
}

// ReadNewCalls is EventStore.ReadNewCalls on expd's own database.
func (s SQLEvents) ReadNewCalls(ctx context.Context, f NewCallsFilter) ([]EventRow, error) {
	q := s.DB.WithContext(ctx).Where("org_id = ? AND type = ?", f.OrgID, vocab.TypeModelCall)
	if len(f.ExperimentIDs) > 0 {
		q = q.Where("experiment_id IN ?", f.ExperimentIDs)
	}
	if !f.AfterReceived.IsZero() {
		q = q.Where("(received_at > ? OR (received_at = ? AND event_id > ?))", f.AfterReceived, f.AfterReceived, f.AfterID)
	}
	if !f.ReceivedBefore.IsZero() {
		q = q.Where("received_at < ?", f.ReceivedBefore)
	}
	if !f.From.IsZero() {
		q = q.Where("ts >= ?", f.From)
	}
	if !f.To.IsZero() {
		q = q.Where("ts < ?", f.To)
	}
	var rows []EventRow
	if err := q.Order("received_at, event_id").Limit(f.Limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read new model calls: %w", err)
	}
	return rows, nil
}

// ReadCall is EventStore.ReadCall on expd's own database.
func (s SQLEvents) ReadCall(ctx context.Context, orgID, eventID string) (EventRow, bool, error) {
	var rows []EventRow
	err := s.DB.WithContext(ctx).Where("org_id = ? AND event_id = ? AND type = ?", orgID, eventID, vocab.TypeModelCall).Limit(1).Find(&rows).Error
	if err != nil {
		return EventRow{}, false, fmt.Errorf("read model call %s: %w", eventID, err)
	}
	if len(rows) == 0 {
		return EventRow{}, false, nil
	}
	return rows[0], true, nil
}
