package results

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/datatypes"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// stagedRow is a comparison waiting for publication (table result_staging).
type stagedRow struct {
	ExperimentID string `gorm:"primaryKey"`
	ComputedFor  string `gorm:"primaryKey"`
	Metric       string `gorm:"primaryKey"`
	Variant      string `gorm:"primaryKey"`
	Payload      datatypes.JSON
}

func (stagedRow) TableName() string { return "result_staging" }

// insertBatch bounds rows per INSERT (SQLite allows 32,766 parameters).
const insertBatch = 200

var resultKey = []clause.Column{{Name: "experiment_id"}, {Name: "computed_for"}, {Name: "metric"}, {Name: "variant"}}

// Stage replaces the staged comparisons of a run with a, and records its
// SRM check on the run, in one transaction. Repeating it is harmless.
func Stage(ctx context.Context, db *gorm.DB, experimentID, computedFor string, a Analysis) error {
	staged := make([]stagedRow, len(a.Rows))
	for i, r := range a.Rows {
		payload, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("encode staged row: %w", err)
		}
		staged[i] = stagedRow{ExperimentID: experimentID, ComputedFor: computedFor, Metric: r.Metric, Variant: r.Variant, Payload: payload}
	}
	srm, err := json.Marshal(a.SRM)
	if err != nil {
		return fmt.Errorf("encode srm: %w", err)
	}
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("experiment_id = ? AND computed_for = ?", experimentID, computedFor).Delete(&stagedRow{}).Error; err != nil {
			return fmt.Errorf("clear staged rows: %w", err)
		}
		if len(staged) > 0 {
			if err := tx.CreateInBatches(staged, insertBatch).Error; err != nil {
				return fmt.Errorf("stage rows: %w", err)
			}
		}
		if err := tx.Model(&Run{}).Where("experiment_id = ? AND computed_for = ?", experimentID, computedFor).Update("srm", datatypes.JSON(srm)).Error; err != nil {
			return fmt.Errorf("record srm: %w", err)
		}
		return nil
	})
}

// Publish moves the staged comparisons of a run into results in one
// transaction: Benjamini–Hochberg across the run, upsert of every row,
// removal of rows of this run that the new analysis no longer has, and the
// run marked completed. It returns the number of rows. After a publication
// whose answer was lost, a retry finds nothing staged and returns the
// completed run's count, so rows are written once.
func Publish(ctx context.Context, db *gorm.DB, experimentID, computedFor string, at time.Time) (int, error) {
	var count int
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var staged []stagedRow
		if err := tx.Where("experiment_id = ? AND computed_for = ?", experimentID, computedFor).Order("metric, variant").Find(&staged).Error; err != nil {
			return fmt.Errorf("read staged rows: %w", err)
		}
		if len(staged) == 0 {
			var err error
			count, err = publishNothingStaged(tx, experimentID, computedFor, at)
			return err
		}
		rows, err := decodeStaged(staged)
		if err != nil {
			return err
		}
		ApplyFDR(rows)
		if err := tx.Clauses(clause.OnConflict{Columns: resultKey, UpdateAll: true}).CreateInBatches(rows, insertBatch).Error; err != nil {
			return fmt.Errorf("upsert result rows: %w", err)
		}
		// Metric and variant names cannot hold '/', so the pair is one key.
		keys := make([]string, len(rows))
		for i, r := range rows {
			keys[i] = r.Metric + "/" + r.Variant
		}
		if err := tx.Where("experiment_id = ? AND computed_for = ? AND metric || '/' || variant NOT IN ?", experimentID, computedFor, keys).
			Delete(&Row{}).Error; err != nil {
			return fmt.Errorf("remove stale result rows: %w", err)
		}
		if err := tx.Where("experiment_id = ? AND computed_for = ?", experimentID, computedFor).Delete(&stagedRow{}).Error; err != nil {
			return fmt.Errorf("clear staged rows: %w", err)
		}
		count = len(rows)
		return tx.Model(&Run{}).Where("experiment_id = ? AND computed_for = ?", experimentID, computedFor).
			Updates(map[string]any{"status": StatusCompleted, "row_count": count, "error": "", "finished_at": at}).Error
	})
	if err != nil {
		return 0, fmt.Errorf("publish run %s of %s: %w", computedFor, experimentID, err)
	}
	return count, nil
}

func decodeStaged(staged []stagedRow) ([]Row, error) {
	rows := make([]Row, len(staged))
	for i, s := range staged {
		if err := json.Unmarshal(s.Payload, &rows[i]); err != nil {
			return nil, fmt.Errorf("decode staged row %s/%s: %w", s.Metric, s.Variant, err)
		}
		rows[i].ExperimentID, rows[i].ComputedFor = s.ExperimentID, s.ComputedFor
	}
	return rows, nil
}

// publishNothingStaged answers a publication that finds nothing staged:
// either a retry after the publication committed (the completed run's
// count), or an analysis that produced no rows (no metrics, or no exposed
// users yet), which completes the run with zero rows instead of failing it
// forever.
func publishNothingStaged(tx *gorm.DB, experimentID, computedFor string, at time.Time) (int, error) {
	var r Run
	err := tx.Where("experiment_id = ? AND computed_for = ?", experimentID, computedFor).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return 0, ErrRunNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("read run: %w", err)
	}
	if r.Status == StatusCompleted {
		return r.RowCount, nil
	}
	if err := tx.Where("experiment_id = ? AND computed_for = ?", experimentID, computedFor).Delete(&Row{}).Error; err != nil {
		return 0, fmt.Errorf("remove result rows of an empty run: %w", err)
	}
	err = tx.Model(&Run{}).Where("experiment_id = ? AND computed_for = ?", experimentID, computedFor).
		Updates(map[string]any{"status": StatusCompleted, "row_count": 0, "error": "", "finished_at": at}).Error
	if err != nil {
		return 0, fmt.Errorf("complete empty run: %w", err)
	}
	return 0, nil
}
