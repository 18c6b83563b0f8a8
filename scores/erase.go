package scores

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
)

// deleteChunk bounds the call ids of one DELETE (SQLite's bound
// parameters).
const deleteChunk = 1000

// DeleteCalls deletes the org's scores of the calls callIDs (the model
// calls of an erased user, docs/privacy.md) and returns how many.
func DeleteCalls(ctx context.Context, db *gorm.DB, orgID string, callIDs []string) (int64, error) {
	var n int64
	for chunk := range slices.Chunk(callIDs, deleteChunk) {
		res := db.WithContext(ctx).Exec("DELETE FROM scores WHERE org_id = ? AND call_id IN ?", orgID, chunk)
		if res.Error != nil {
			return n, fmt.Errorf("delete scores of %d calls of org %s: %w", len(chunk), orgID, res.Error)
		}
		n += res.RowsAffected
	}
	return n, nil
}

// PurgeBefore deletes the org's scores stamped before cutoff (retention,
// docs/privacy.md) through the (org_id, name, ts) index's org prefix and
// returns how many.
func PurgeBefore(ctx context.Context, db *gorm.DB, orgID string, cutoff time.Time) (int64, error) {
	res := db.WithContext(ctx).Exec("DELETE FROM scores WHERE org_id = ? AND ts < ?", orgID, cutoff.UTC())
	if res.Error != nil {
		return 0, fmt.Errorf("purge scores of org %s: %w", orgID, res.Error)
	}
	return res.RowsAffected, nil
}
