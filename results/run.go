package results

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/datatypes"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Run statuses.
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// ErrRunNotFound is returned for a run the experiment does not have.
var ErrRunNotFound = errors.New("results run not found")

// Run is the record of one run of an experiment (table result_runs).
type Run struct {
	ExperimentID       string `gorm:"primaryKey"`
	ComputedFor        string `gorm:"primaryKey"`
	OrgID              string
	Kind               string
	WorkflowID         string
	Status             string
	ExperimentVersion  int
	WindowStart        time.Time
	WindowEnd          time.Time
	WindowDays         int
	RetentionTruncated bool
	SRM                datatypes.JSON `gorm:"column:srm"`
	RowCount           int
	Error              string
	// Coverage is what the run counted and left out (CountCoverage);
	// NoResults why a completed run has no rows (migration 0161).
	Coverage  datatypes.JSON
	NoResults string
	// Verdict is the run's recommendation (verdict.Verdict, migration
	// 0310), set once the run is published; empty before.
	Verdict    datatypes.JSON
	StartedAt  time.Time
	FinishedAt *time.Time
}

// TableName is the result_runs table of migration 0006.
func (Run) TableName() string { return "result_runs" }

// StartRun records a run as running, or restarts the record of a run that
// is retried or rerun (a failed day): its window and version are those of
// this attempt.
func StartRun(ctx context.Context, db *gorm.DB, r Run) error {
	r.Status, r.Error, r.FinishedAt, r.Coverage, r.NoResults, r.Verdict = StatusRunning, "", nil, nil, "", nil
	return upsertRun(ctx, db, r, runColumns)
}

// RecordSkippedRun records a run that had nothing to analyse (the
// experiment did not exist before the window's end) as completed with no
// rows and the reason, so its status and the results route can say why.
func RecordSkippedRun(ctx context.Context, db *gorm.DB, r Run, reason string) error {
	r.Status, r.Error, r.NoResults, r.Coverage, r.RowCount = StatusCompleted, "", reason, nil, 0
	if r.FinishedAt == nil {
		at := r.StartedAt
		r.FinishedAt = &at
	}
	return upsertRun(ctx, db, r, append([]string{"row_count"}, runColumns...))
}

// runColumns are what a new attempt of a run replaces; a rerun keeps its
// earlier row count until it publishes.
var runColumns = []string{"workflow_id", "status", "experiment_version", "window_start", "window_end", "window_days",
	"retention_truncated", "error", "coverage", "no_results", "verdict", "started_at", "finished_at"}

func upsertRun(ctx context.Context, db *gorm.DB, r Run, cols []string) error {
	err := db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "experiment_id"}, {Name: "computed_for"}},
		DoUpdates: clause.AssignmentColumns(cols),
	}).Create(&r).Error
	if err != nil {
		return fmt.Errorf("record run %s of %s: %w", r.ComputedFor, r.ExperimentID, err)
	}
	return nil
}

// LatestRun returns the experiment's run with the latest window end, in
// any state; ErrRunNotFound when it has none.
func LatestRun(ctx context.Context, db *gorm.DB, orgID, experimentID string) (Run, error) {
	var r Run
	err := db.WithContext(ctx).Where("org_id = ? AND experiment_id = ?", orgID, experimentID).
		Order("window_end DESC, computed_for DESC").Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Run{}, ErrRunNotFound
	}
	if err != nil {
		return Run{}, fmt.Errorf("load latest run of %s: %w", experimentID, err)
	}
	return r, nil
}

// FailRun marks a run failed with the reason; its earlier rows, if any,
// stay as they were.
func FailRun(ctx context.Context, db *gorm.DB, experimentID, computedFor, reason string, at time.Time) error {
	err := db.WithContext(ctx).Model(&Run{}).
		Where("experiment_id = ? AND computed_for = ? AND status <> ?", experimentID, computedFor, StatusCompleted).
		Updates(map[string]any{"status": StatusFailed, "error": reason, "finished_at": at}).Error
	if err != nil {
		return fmt.Errorf("mark run %s of %s failed: %w", computedFor, experimentID, err)
	}
	return nil
}

// LoadRun returns one run of an experiment of the org.
func LoadRun(ctx context.Context, db *gorm.DB, orgID, experimentID, computedFor string) (Run, error) {
	var r Run
	err := db.WithContext(ctx).Where("org_id = ? AND experiment_id = ? AND computed_for = ?", orgID, experimentID, computedFor).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Run{}, ErrRunNotFound
	}
	if err != nil {
		return Run{}, fmt.Errorf("load run %s of %s: %w", computedFor, experimentID, err)
	}
	return r, nil
}

// AvailableDays lists the runs of an experiment that have result rows,
// newest first (by window end: a manual run sorts by its instant, a day by
// its following midnight).
func AvailableDays(ctx context.Context, db *gorm.DB, orgID, experimentID string) ([]string, error) {
	var out []string
	err := db.WithContext(ctx).Model(&Run{}).
		Where("org_id = ? AND experiment_id = ? AND status = ? AND row_count > 0", orgID, experimentID, StatusCompleted).
		Order("window_end DESC, computed_for DESC").Pluck("computed_for", &out).Error
	if err != nil {
		return nil, fmt.Errorf("list available days of %s: %w", experimentID, err)
	}
	return out, nil
}

// LoadRows returns the rows of one run, by metric then variant.
func LoadRows(ctx context.Context, db *gorm.DB, orgID, experimentID, computedFor string) ([]Row, error) {
	var rows []Row
	err := db.WithContext(ctx).Where("org_id = ? AND experiment_id = ? AND computed_for = ?", orgID, experimentID, computedFor).
		Order("metric, variant").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("load rows of run %s of %s: %w", computedFor, experimentID, err)
	}
	return rows, nil
}

// SaveVerdict stores a published run's verdict (JSON). Repeating it is
// harmless: the verdict of the same rows is the same.
func SaveVerdict(ctx context.Context, db *gorm.DB, experimentID, computedFor string, verdict []byte) error {
	err := db.WithContext(ctx).Model(&Run{}).Where("experiment_id = ? AND computed_for = ?", experimentID, computedFor).
		Update("verdict", datatypes.JSON(verdict)).Error
	if err != nil {
		return fmt.Errorf("store verdict of run %s of %s: %w", computedFor, experimentID, err)
	}
	return nil
}

// RunsWithoutVerdict lists up to limit published runs (completed, with
// rows) that have no stored verdict: those published before verdicts
// existed. The verdict backfill reads them.
func RunsWithoutVerdict(ctx context.Context, db *gorm.DB, limit int) ([]Run, error) {
	var out []Run
	err := db.WithContext(ctx).Where("status = ? AND row_count > 0 AND verdict IS NULL", StatusCompleted).
		Order("experiment_id, computed_for").Limit(limit).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("list runs without a verdict: %w", err)
	}
	return out, nil
}
