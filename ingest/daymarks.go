package ingest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/scores"
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
// insert, then the pins of the rows stored now. It returns the keys stored
// now and adds the late days of those rows to late, which the caller marks
// (markLate) once, with the late days of the group's scores.
func storeEvents(ctx context.Context, tx groupTx, rows []EventRow, late map[dayMark]bool) ([]eventKey, error) {
	if _, split := tx.(splitTx); split {
		return storeSplit(ctx, tx, rows, late)
	}
	inserted, err := tx.insert(ctx, rows)
	if err != nil || len(inserted) == 0 {
		return inserted, err
	}
	lateDays(rows, inserted, late)
	if err := tx.pin(ctx, storedRows(rows, inserted)); err != nil {
		return nil, err
	}
	return inserted, nil
}

// storeSplit is storeEvents of a group split over an engine and the
// control database (NewEngineWriter). Such a group pins every exposure it
// admits, stored now or not (a retry's reconciliation), so the pins need
// not wait for the engine: the control transaction makes them while the
// engine writes, and commits only after both.
func storeSplit(ctx context.Context, tx groupTx, rows []EventRow, late map[dayMark]bool) ([]eventKey, error) {
	pinned := make(chan error, 1)
	go func() { pinned <- tx.pin(ctx, rows) }()
	inserted, err := tx.insert(ctx, rows)
	if pinErr := <-pinned; err == nil {
		err = pinErr
	}
	if err != nil {
		return nil, err
	}
	lateDays(rows, inserted, late)
	return inserted, nil
}

// insertMarked stores rows (tx.insert) and raises the day marks of the
// late ones that were stored now.
func insertMarked(ctx context.Context, tx eventsTx, rows []EventRow) ([]eventKey, error) {
	inserted, err := tx.insert(ctx, rows)
	if err != nil || len(inserted) == 0 {
		return inserted, err
	}
	return inserted, markLate(ctx, tx, lateDays(rows, inserted, nil))
}

// markLate raises the marks of days (none: nothing to do) in sorted
// order, so two transactions lock the rows in the same order; a group
// calls it once, for its events and scores together.
func markLate(ctx context.Context, tx eventsTx, days map[dayMark]bool) error {
	if len(days) == 0 {
		return nil
	}
	out := make([]dayMark, 0, len(days))
	for m := range days {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b dayMark) int {
		return cmp.Or(strings.Compare(a.orgID, b.orgID), strings.Compare(a.day, b.day))
	})
	return tx.markDays(ctx, out)
}

// lateDays adds to days (a new set when nil) the (org, day) of stored
// rows received after their day ended.
func lateDays(rows []EventRow, inserted []eventKey, days map[dayMark]bool) map[dayMark]bool {
	if days == nil {
		days = map[dayMark]bool{}
	}
	var stored map[eventKey]bool
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
			days[dayMark{e.OrgID, day}] = true
		}
	}
	return days
}

// lateScoreDays adds to days the (org, day) of the model calls whose
// scores were written now (new or replacing) when the call's UTC day
// ended before receivedAt's: results count a score on its call's day
// (docs/quality.md, "Score metrics"), whose rollup it makes stale. A
// score whose call is not stored yet marks nothing: the call, when it
// arrives, is a late event of its day if that day has ended.
func lateScoreDays(ctx context.Context, tx eventsTx, written []scores.Written, receivedAt time.Time, days map[dayMark]bool) (map[dayMark]bool, error) {
	byOrg := map[string][]string{}
	seen := map[eventKey]bool{}
	for _, w := range written {
		k := eventKey{w.Key.OrgID, w.Key.CallID}
		if !seen[k] {
			seen[k] = true
			byOrg[w.Key.OrgID] = append(byOrg[w.Key.OrgID], w.Key.CallID)
		}
	}
	today := receivedAt.UTC().Format(dayLayout)
	for org, ids := range byOrg {
		calls, err := tx.callDays(ctx, org, ids)
		if err != nil {
			return nil, err
		}
		for _, ts := range calls {
			if day := ts.UTC().Format(dayLayout); day < today {
				days[dayMark{org, day}] = true
			}
		}
	}
	return days, nil
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
