package evaluators

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
)

// eraseChunk bounds the call ids of one DELETE (SQLite's bound
// parameters).
const eraseChunk = 1000

// DeleteCalls deletes the org's evaluations of the calls callIDs (their
// reasons quote the calls' texts; the model calls of an erased user,
// docs/privacy.md) and returns how many. The evaluator ids come first so
// the delete walks the primary key.
func DeleteCalls(ctx context.Context, db *gorm.DB, orgID string, callIDs []string) (int64, error) {
	var n int64
	for chunk := range slices.Chunk(callIDs, eraseChunk) {
		res := db.WithContext(ctx).
			Where("evaluator_id IN (SELECT id FROM evaluators WHERE org_id = ?) AND call_id IN ?", orgID, chunk).
			Delete(&evaluation{})
		if res.Error != nil {
			return n, fmt.Errorf("delete evaluations of %d calls of org %s: %w", len(chunk), orgID, res.Error)
		}
		n += res.RowsAffected
	}
	return n, nil
}

// PurgeBefore deletes the org's evaluations made before cutoff (their
// reasons quote the calls' texts; retention, docs/privacy.md) and returns
// how many.
func PurgeBefore(ctx context.Context, db *gorm.DB, orgID string, cutoff time.Time) (int64, error) {
	res := db.WithContext(ctx).
		Where("evaluator_id IN (SELECT id FROM evaluators WHERE org_id = ?) AND evaluated_at < ?", orgID, cutoff.UTC()).
		Delete(&evaluation{})
	if res.Error != nil {
		return 0, fmt.Errorf("purge evaluations of org %s: %w", orgID, res.Error)
	}
	return res.RowsAffected, nil
}
