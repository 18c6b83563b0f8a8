package scores

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// maxCallsPerRead bounds the call ids of one IN list (SQLite allows 32,766
// parameters; a page of calls is far smaller).
const maxCallsPerRead = 1000

// OfCalls returns the stored scores of the org's calls, by call id, each
// call's sorted by name then source: ingest.SQLEvents' ScoresOfCalls
// (readers go through the events store, which on ClickHouse holds the
// scores elsewhere).
func OfCalls(ctx context.Context, db *gorm.DB, orgID string, callIDs []string) (map[string][]Row, error) {
	out := make(map[string][]Row, len(callIDs))
	for start := 0; start < len(callIDs); start += maxCallsPerRead {
		var rows []Row
		err := db.WithContext(ctx).Table("scores").
			Where("org_id = ? AND call_id IN ?", orgID, callIDs[start:min(start+maxCallsPerRead, len(callIDs))]).
			Order("call_id, name, source").Find(&rows).Error
		if err != nil {
			return nil, fmt.Errorf("read scores of calls: %w", err)
		}
		for _, r := range rows {
			out[r.CallID] = append(out[r.CallID], r)
		}
	}
	return out, nil
}

// Range selects scores of one name with a value in [Min, Max] (nil: open).
type Range struct {
	Name     string
	Min, Max *float64
}

// CallsScored is a subquery of the org's call ids that have a score in r,
// for a reader of calls to filter with ("event_id IN ?"): the scores table
// stays this package's.
func CallsScored(db *gorm.DB, orgID string, r Range) *gorm.DB {
	q := db.Table("scores").Select("call_id").Where("org_id = ? AND name = ?", orgID, r.Name)
	if r.Min != nil {
		q = q.Where("value >= ?", *r.Min)
	}
	if r.Max != nil {
		q = q.Where("value <= ?", *r.Max)
	}
	return q
}
