package ingest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Late events and day marks (docs/results.md, "Incremental results").
// Results roll each UTC day of an experiment up once the day has ended; an
// event stored later for that day (a late SDK flush, a spill replay, an
// import) makes the rollup stale. So the transaction that stores an event
// whose UTC day is before the day it is received on raises the version of
// that (org, day) in event_day_marks; results compare it with the version
// their rollup saw. Events of the current day never touch the table, so
// the hot path pays only a comparison per row.

// dayMark is one (org, UTC day) whose events changed.
type dayMark struct{ orgID, day string }

// dayLayout is the format of a UTC day in event_day_marks.
const dayLayout = "2006-01-02"

// storeEvents is the write path's store of rows: the events store's
// insert (insertMarked), then the pins of the rows stored now, and returns
// the keys stored now.
func storeEvents(ctx context.Context, tx groupTx, rows []EventRow) ([]eventKey, error) {
	inserted, err := insertMarked(ctx, tx, rows)
	if err != nil || len(inserted) == 0 {
		return inserted, err
	}
	if err := tx.pin(ctx, storedRows(rows, inserted)); err != nil {
		return nil, err
	}
	return inserted, nil
}

// insertMarked stores rows (tx.insert) and raises the day marks of the
// late ones that were stored now.
func insertMarked(ctx context.Context, tx eventsTx, rows []EventRow) ([]eventKey, error) {
	inserted, err := tx.insert(ctx, rows)
	if err != nil || len(inserted) == 0 {
		return inserted, err
	}
	marks := lateDays(rows, inserted)
	if len(marks) == 0 {
		return inserted, nil
	}
	if err := tx.markDays(ctx, marks); err != nil {
		return nil, err
	}
	return inserted, nil
}

// lateDays lists, sorted (two transactions lock the rows in the same
// order), the (org, day) of stored rows received after their day ended.
func lateDays(rows []EventRow, inserted []eventKey) []dayMark {
	var stored map[eventKey]bool
	seen := map[dayMark]bool{}
	for i := range rows {
		e := &rows[i]
		day := e.Ts.UTC().Format(dayLayout)
		if day >= e.ReceivedAt.UTC().Format(dayLayout) {
			continue
		}
		if stored == nil {
			stored = make(map[eventKey]bool, len(inserted))
			for _, k := range inserted {
				stored[k] = true
			}
		}
		if stored[keyOf(e)] {
			seen[dayMark{e.OrgID, day}] = true
		}
	}
	out := make([]dayMark, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b dayMark) int {
		return cmp.Or(strings.Compare(a.orgID, b.orgID), strings.Compare(a.day, b.day))
	})
	return out
}

const bumpMark = ` ON CONFLICT (org_id, day) DO UPDATE SET version = event_day_marks.version + 1`

func (p *pgTx) markDays(ctx context.Context, marks []dayMark) error {
	orgs, days := make([]string, len(marks)), make([]string, len(marks))
	for i, m := range marks {
		orgs[i], days[i] = m.orgID, m.day
	}
	_, err := p.tx.Exec(ctx, `INSERT INTO event_day_marks (org_id, day, version)
SELECT o::uuid, d, 1 FROM unnest($1::text[], $2::text[]) AS m(o, d)`+bumpMark, orgs, days)
	if err != nil {
		return fmt.Errorf("mark late days: %w", err)
	}
	return nil
}

func (s sqliteTx) markDays(ctx context.Context, marks []dayMark) error {
	args := make([]any, 0, 2*len(marks))
	for _, m := range marks {
		args = append(args, m.orgID, m.day)
	}
	values := strings.TrimSuffix(strings.Repeat("(?, ?, 1), ", len(marks)), ", ")
	if err := s.tx.WithContext(ctx).Exec(`INSERT INTO event_day_marks (org_id, day, version) VALUES `+values+bumpMark, args...).Error; err != nil {
		return fmt.Errorf("mark late days: %w", err)
	}
	return nil
}

// DayMarks returns the late-event versions of the org's days in
// [from, to] (days without late events are absent, version 0). db may be
// a transaction.
func DayMarks(ctx context.Context, db *gorm.DB, orgID string, from, to time.Time) (map[string]int64, error) {
	var rows []struct {
		Day     string
		Version int64
	}
	err := db.WithContext(ctx).Table("event_day_marks").Select("day, version").
		Where("org_id = ? AND day >= ? AND day <= ?", orgID, from.UTC().Format(dayLayout), to.UTC().Format(dayLayout)).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("read day marks of org %s: %w", orgID, err)
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.Day] = r.Version
	}
	return out, nil
}
