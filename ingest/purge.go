package ingest

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/models"
)

// PurgeBefore deletes up to batch of the org's events older than cutoff
// in one statement and returns how many it deleted; fewer than batch
// means none are left. Each batch commits on its own.
func PurgeBefore(ctx context.Context, db *gorm.DB, orgID string, cutoff time.Time, batch int) (int64, error) {
	res := db.WithContext(ctx).Exec(`DELETE FROM events WHERE org_id = ? AND event_id IN (
  SELECT event_id FROM events WHERE org_id = ? AND ts < ? LIMIT ?)`, orgID, orgID, cutoff, batch)
	if res.Error != nil {
		return 0, fmt.Errorf("purge events of org %s before %s: %w", orgID, cutoff.Format(time.RFC3339), res.Error)
	}
	return res.RowsAffected, nil
}

// ReadFilter selects an experiment's stored events; empty fields match all.
type ReadFilter struct {
	OrgID        string
	ExperimentID string
	Type         string
	UserID       string
	Limit        int
}

// Read returns an experiment's stored events, newest first. event_id
// breaks ties between events of the same instant, so pages are stable.
func Read(ctx context.Context, db *gorm.DB, f ReadFilter) ([]models.Event, error) {
	q := db.WithContext(ctx).Where("org_id = ? AND experiment_id = ?", f.OrgID, f.ExperimentID)
	if f.Type != "" {
		q = q.Where("type = ?", f.Type)
	}
	if f.UserID != "" {
		q = q.Where("user_id = ?", f.UserID)
	}
	var rows []models.Event
	if err := q.Order("ts DESC, event_id DESC").Limit(f.Limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return rows, nil
}
