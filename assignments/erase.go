package assignments

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// DeleteUser deletes the user's pins in every experiment of the org (an
// erasure, docs/privacy.md) and returns how many. A later assignment of
// the same user id buckets afresh.
func DeleteUser(ctx context.Context, db *gorm.DB, orgID, userID string) (int64, error) {
	res := db.WithContext(ctx).Where("org_id = ? AND user_id = ?", orgID, userID).Delete(&Assignment{})
	if res.Error != nil {
		return 0, fmt.Errorf("delete pins of a user of org %s: %w", orgID, res.Error)
	}
	return res.RowsAffected, nil
}

// OfUser returns the user's pins in every experiment of the org, oldest
// first (an export, docs/privacy.md).
func OfUser(ctx context.Context, db *gorm.DB, orgID, userID string) ([]Assignment, error) {
	var rows []Assignment
	if err := db.WithContext(ctx).Where("org_id = ? AND user_id = ?", orgID, userID).
		Order("created_at, experiment_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read pins of a user of org %s: %w", orgID, err)
	}
	return rows, nil
}

// PurgeBefore deletes the org's pins recorded before cutoff, except in the
// experiments keep (the running ones: a pin keeps its user's variant while
// the experiment serves it, docs/privacy.md "Retention"), and returns how
// many.
func PurgeBefore(ctx context.Context, db *gorm.DB, orgID string, cutoff time.Time, keep []string) (int64, error) {
	q := db.WithContext(ctx).Where("org_id = ? AND created_at < ?", orgID, cutoff.UTC())
	if len(keep) > 0 {
		q = q.Where("experiment_id NOT IN ?", keep)
	}
	res := q.Delete(&Assignment{})
	if res.Error != nil {
		return 0, fmt.Errorf("purge pins of org %s: %w", orgID, res.Error)
	}
	return res.RowsAffected, nil
}
