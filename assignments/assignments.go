// Package assignments keeps the sticky pins of docs/architecture.md §5: the first
// server-side assignment or the first exposure of a user pins (experiment,
// user) to a variant, and later answers honour the pin.
package assignments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/vocab"
)

// Sources of a pin.
const (
	SourceAssign   = "assign"
	SourceExposure = string(vocab.TypeExposure) // pinned by an exposure event
)

// Pin is one (experiment, user) -> variant binding to record.
type Pin struct {
	OrgID        string
	ExperimentID string
	UserID       string
	Variant      string
	Source       string
}

// PinFirst records pins that do not exist yet; existing pins win, so the
// first one ever recorded stays. Safe to call inside a transaction.
func PinFirst(ctx context.Context, db *gorm.DB, pins []Pin) error {
	if len(pins) == 0 {
		return nil
	}
	now := time.Now().UTC()
	rows := make([]Assignment, len(pins))
	for i, p := range pins {
		rows[i] = Assignment{OrgID: p.OrgID, ExperimentID: p.ExperimentID, UserID: p.UserID, Variant: p.Variant, Source: p.Source, CreatedAt: now}
	}
	err := db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(rows, 500).Error
	if err != nil {
		return fmt.Errorf("pin assignments: %w", err)
	}
	return nil
}

// Pinned returns the pinned variant of a user, or "" when none.
func Pinned(ctx context.Context, db *gorm.DB, experimentID, userID string) (string, error) {
	var a Assignment
	err := db.WithContext(ctx).Select("variant").Where("experiment_id = ? AND user_id = ?", experimentID, userID).Take(&a).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read pin: %w", err)
	}
	return a.Variant, nil
}

// PinnedUsers returns every pin of an experiment, for the sticky filters a
// config version ships (bucketing.BuildSticky).
func PinnedUsers(ctx context.Context, db *gorm.DB, experimentID string) ([]bucketing.PinnedUser, error) {
	var rows []bucketing.PinnedUser
	err := db.WithContext(ctx).Model(&Assignment{}).Select("user_id", "variant").
		Where("experiment_id = ?", experimentID).Order("user_id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("read pins of experiment %s: %w", experimentID, err)
	}
	return rows, nil
}

// CountPinned is how many users of the experiment hold a pin: the users a
// weight change does not move (the dashboard's edit preview says so).
func CountPinned(ctx context.Context, db *gorm.DB, orgID, experimentID string) (int64, error) {
	var n int64
	err := db.WithContext(ctx).Model(&Assignment{}).Where("org_id = ? AND experiment_id = ?", orgID, experimentID).Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("count pins: %w", err)
	}
	return n, nil
}
