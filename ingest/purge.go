package ingest

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/database"
)

// PurgeBefore deletes up to about limit of the org's events older than
// cutoff (and, on PostgreSQL, their ids in event_ids) and returns how many
// it deleted; call it until it returns less than limit. A batch ends at a
// timestamp found through the (org_id, ts) index, so each statement is
// short and needs no key of the events table. It
// deletes more than limit rows while more than limit remain.
func (s SQLEvents) PurgeBefore(ctx context.Context, orgID string, cutoff time.Time, limit int) (int64, error) {
	var bounds []time.Time
	if err := s.DB.WithContext(ctx).Raw(`SELECT ts FROM events WHERE org_id = ? AND ts < ? ORDER BY ts LIMIT 1 OFFSET ?`,
		orgID, cutoff, limit).Scan(&bounds).Error; err != nil {
		return 0, fmt.Errorf("find purge batch of org %s: %w", orgID, err)
	}
	// Up to the (limit+1)th timestamp inclusive: more than limit rows,
	// however many share it; else everything before the cutoff.
	where, end := `org_id = ? AND ts < ?`, cutoff
	if len(bounds) == 1 {
		where, end = `org_id = ? AND ts <= ?`, bounds[0]
	}
	n, err := deleteEvents(ctx, s.DB, where, orgID, end)
	if err != nil {
		return 0, fmt.Errorf("purge events of org %s before %s: %w", orgID, end.Format(time.RFC3339), err)
	}
	return n, nil
}

// deleteEvents deletes the events matching where and, on PostgreSQL,
// forgets their ids in event_ids in the same statement, so an event sent
// again with one of them is stored again.
func deleteEvents(ctx context.Context, db *gorm.DB, where string, args ...any) (int64, error) {
	q := `DELETE FROM events WHERE ` + where
	if !database.IsPostgres(db) {
		res := db.WithContext(ctx).Exec(q, args...)
		return res.RowsAffected, res.Error
	}
	var n int64
	err := db.WithContext(ctx).Raw(`WITH gone AS (`+q+` RETURNING org_id, event_id),
forgotten AS (DELETE FROM event_ids i USING gone g WHERE i.org_id = g.org_id AND i.event_id = g.event_id)
SELECT count(*) FROM gone`, args...).Scan(&n).Error
	return n, err
}

// DeleteUser deletes the user's events and, on PostgreSQL, forgets their
// ids, as the purge does.
func (s SQLEvents) DeleteUser(ctx context.Context, orgID, userID string) (int64, error) {
	n, err := deleteEvents(ctx, s.DB, "org_id = ? AND user_id = ?", orgID, userID)
	if err != nil {
		return 0, fmt.Errorf("delete events of a user of org %s: %w", orgID, err)
	}
	return n, nil
}
