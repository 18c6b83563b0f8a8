package results

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// DeleteUserRollups deletes the user's rows of the org's day rollups
// (their exposures, metric sums and CUPED pre-period sums) and returns
// how many: an erasure (docs/privacy.md). The days stay rolled up for
// everyone else, so the next run reads them without the user; its
// events are gone too, so a day rolled up again cannot bring them back.
// The org's rolled-up days select the rows through the primary key.
func DeleteUserRollups(ctx context.Context, db *gorm.DB, orgID, userID string) (int64, error) {
	res := db.WithContext(ctx).Exec(`DELETE FROM result_rollups WHERE user_id = ? AND (experiment_id, day) IN
  (SELECT experiment_id, day FROM result_rollup_days WHERE org_id = ?)`, userID, orgID)
	if res.Error != nil {
		return 0, fmt.Errorf("delete rollups of a user of org %s: %w", orgID, res.Error)
	}
	return res.RowsAffected, nil
}
