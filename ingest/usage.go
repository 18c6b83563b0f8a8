package ingest

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// MonthOf is the usage counter key of an instant: its UTC calendar month.
func MonthOf(t time.Time) string { return t.UTC().Format("2006-01") }

// NextMonth is the first instant of the UTC month after t, when a used-up
// allowance is available again.
func NextMonth(t time.Time) time.Time {
	y, m, _ := t.UTC().Date()
	return time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC)
}

// MonthlyUsage is the number of events the org stored in the month of at.
func MonthlyUsage(ctx context.Context, db *gorm.DB, orgID string, at time.Time) (int64, error) {
	var n int64
	err := db.WithContext(ctx).Table("event_usage").Select("COALESCE(SUM(events), 0)").
		Where("org_id = ? AND month = ?", orgID, MonthOf(at)).Scan(&n).Error
	if err != nil {
		return 0, fmt.Errorf("read event usage: %w", err)
	}
	return n, nil
}
