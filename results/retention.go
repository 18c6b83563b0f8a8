package results

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// PurgeNightly deletes up to limit nightly runs of the org whose day is
// before the cutoff's day, with their rows, in one transaction, and
// returns how many runs it deleted; the last batch also deletes the org's
// day rollups before the cutoff. Manual runs are kept forever: only runs
// of kind nightly are selected. Call it until it returns 0.
func PurgeNightly(ctx context.Context, db *gorm.DB, orgID string, cutoff time.Time, limit int) (int, error) {
	before := NightlyKey(cutoff).ComputedFor
	var n int
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var runs []Run
		if err := tx.Select("experiment_id", "computed_for").
			Where("org_id = ? AND kind = ? AND computed_for < ?", orgID, KindNightly, before).
			Order("computed_for").Limit(limit).Find(&runs).Error; err != nil {
			return fmt.Errorf("select expired nightly runs: %w", err)
		}
		for _, r := range runs {
			for _, model := range []any{&Row{}, &stagedRow{}, &Run{}} {
				if err := tx.Where("experiment_id = ? AND computed_for = ?", r.ExperimentID, r.ComputedFor).Delete(model).Error; err != nil {
					return fmt.Errorf("delete nightly run %s of %s: %w", r.ComputedFor, r.ExperimentID, err)
				}
			}
		}
		n = len(runs)
		if n < limit {
			// The last batch: the rollups of days before the cutoff go too
			// (no window reaches them any more).
			return purgeRollups(tx, orgID, before)
		}
		return nil
	})
	return n, err
}

// purgeRollups deletes the org's day rollups before day, and those of the
// PrePeriodDays after it that store CUPED pre-period sums: their sums
// cover events from before the cutoff, which retention has dropped. Those
// days are rolled up again by the next run that reads them, from the
// events that are left (docs/privacy.md, "Retention").
func purgeRollups(tx *gorm.DB, orgID, day string) error {
	cutoff, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return fmt.Errorf("purge rollups before %q: %w", day, err)
	}
	preEnd := cutoff.AddDate(0, 0, PrePeriodDays).Format(time.DateOnly)
	var withPre []rollupDay
	if err := tx.Select("experiment_id", "day").Where("org_id = ? AND day >= ? AND day < ?", orgID, day, preEnd).
		Where("EXISTS (SELECT 1 FROM result_rollups r WHERE r.experiment_id = result_rollup_days.experiment_id AND r.day = result_rollup_days.day AND r.n_pre > 0)").
		Find(&withPre).Error; err != nil {
		return fmt.Errorf("find rollups with expired pre-period sums: %w", err)
	}
	days := `SELECT experiment_id, day FROM result_rollup_days WHERE org_id = ? AND day < ?`
	if err := tx.Exec(`DELETE FROM result_rollups WHERE (experiment_id, day) IN (`+days+`)`, orgID, day).Error; err != nil {
		return fmt.Errorf("delete expired rollups: %w", err)
	}
	if err := tx.Where("org_id = ? AND day < ?", orgID, day).Delete(&rollupDay{}).Error; err != nil {
		return fmt.Errorf("delete expired rollup days: %w", err)
	}
	for _, d := range withPre {
		if err := tx.Exec(`DELETE FROM result_rollups WHERE experiment_id = ? AND day = ?`, d.ExperimentID, d.Day).Error; err != nil {
			return fmt.Errorf("delete rollups with expired pre-period sums: %w", err)
		}
		if err := tx.Where("experiment_id = ? AND day = ?", d.ExperimentID, d.Day).Delete(&rollupDay{}).Error; err != nil {
			return fmt.Errorf("delete rollup day with expired pre-period sums: %w", err)
		}
	}
	return nil
}
