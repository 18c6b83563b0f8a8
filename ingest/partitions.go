package ingest

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/database"
)

// Partition is one UTC day's partition of the events table on
// PostgreSQL (docs/partitions.md). SQLite has none.
type Partition struct {
	Name string
	Day  time.Time // 00:00 UTC of the day it holds
}

const partitionPrefix = "events_p"

// DayOf is 00:00 UTC of t's day.
func DayOf(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// EnsurePartitions creates the day partitions of events for every day from
// from's day to to's day (inclusive) that lacks one, and for every day the
// default partition holds rows of, moving those rows in. It returns the
// days it created. A no-op on SQLite.
func EnsurePartitions(ctx context.Context, db *gorm.DB, from, to time.Time) ([]time.Time, error) {
	if !database.IsPostgres(db) {
		return nil, nil
	}
	var days []time.Time
	for d := DayOf(from); !d.After(to); d = d.AddDate(0, 0, 1) {
		days = append(days, d)
	}
	var stray []time.Time
	if err := db.WithContext(ctx).Raw(`SELECT DISTINCT date_trunc('day', ts AT TIME ZONE 'UTC') FROM events_default`).Scan(&stray).Error; err != nil {
		return nil, fmt.Errorf("list days in events_default: %w", err)
	}
	days = append(days, stray...)
	var created []time.Time
	for _, d := range days {
		var made bool
		day := DayOf(d).Format(time.DateOnly)
		if err := db.WithContext(ctx).Raw(`SELECT expd_ensure_event_partition(?::date)`, day).Scan(&made).Error; err != nil {
			return created, fmt.Errorf("ensure events partition of %s: %w", day, err)
		}
		if made {
			created = append(created, DayOf(d))
		}
	}
	return created, nil
}

// ListPartitions returns the day partitions of events, oldest first
// (none on SQLite). The default partition is not listed.
func ListPartitions(ctx context.Context, db *gorm.DB) ([]Partition, error) {
	if !database.IsPostgres(db) {
		return nil, nil
	}
	var names []string
	err := db.WithContext(ctx).Raw(`SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'events'::regclass AND c.relname LIKE 'events\_p%' ORDER BY c.relname`).Scan(&names).Error
	if err != nil {
		return nil, fmt.Errorf("list events partitions: %w", err)
	}
	out := make([]Partition, 0, len(names))
	for _, n := range names {
		day, err := time.Parse("20060102", n[len(partitionPrefix):])
		if err != nil {
			return nil, fmt.Errorf("events partition %q: %w", n, err)
		}
		out = append(out, Partition{Name: n, Day: day})
	}
	return out, nil
}

// PartitionOrgs lists the orgs with rows in p. It walks the (org_id, ts)
// index one org at a time (a loose index scan), so it costs one index
// descent per org, not a read of the partition.
func PartitionOrgs(ctx context.Context, db *gorm.DB, p Partition) ([]string, error) {
	var orgs []string
	err := db.WithContext(ctx).Raw(fmt.Sprintf(`WITH RECURSIVE o AS (
  (SELECT org_id FROM %[1]s ORDER BY org_id LIMIT 1)
  UNION ALL
  SELECT (SELECT org_id FROM %[1]s WHERE org_id > o.org_id ORDER BY org_id LIMIT 1) FROM o WHERE o.org_id IS NOT NULL
) SELECT org_id::text FROM o WHERE org_id IS NOT NULL`, quoteIdent(p.Name))).Scan(&orgs).Error
	if err != nil {
		return nil, fmt.Errorf("orgs of %s: %w", p.Name, err)
	}
	return orgs, nil
}

// DropPartition removes a whole day: the ids of its rows leave event_ids
// and the partition is detached and dropped, in one transaction. It
// returns how many events went with it.
func DropPartition(ctx context.Context, db *gorm.DB, p Partition) (int64, error) {
	var n int64
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := tx.Raw(`WITH forgotten AS (DELETE FROM event_ids i USING ` + quoteIdent(p.Name) + ` e WHERE i.org_id = e.org_id AND i.event_id = e.event_id)
SELECT count(*) FROM ` + quoteIdent(p.Name)).Scan(&n).Error
		if err != nil {
			return fmt.Errorf("forget ids of %s: %w", p.Name, err)
		}
		if err := tx.Exec(`ALTER TABLE events DETACH PARTITION ` + quoteIdent(p.Name)).Error; err != nil {
			return fmt.Errorf("detach %s: %w", p.Name, err)
		}
		if err := tx.Exec(`DROP TABLE ` + quoteIdent(p.Name)).Error; err != nil {
			return fmt.Errorf("drop %s: %w", p.Name, err)
		}
		return nil
	})
	return n, err
}

// quoteIdent quotes a partition name for SQL text. Names come from
// pg_class and are ours (events_pYYYYMMDD), but quoting costs nothing.
func quoteIdent(s string) string { return `"` + s + `"` }

// DayPartitions is an events store whose UTC days are partitions that
// retention drops whole once no org keeps them (DropExpiredPartitions):
// PostgreSQL's day partitions, ClickHouse's. A store without (SQLite) has
// nothing to drop.
type DayPartitions interface {
	// Days lists the days holding events, oldest first.
	Days(ctx context.Context) ([]time.Time, error)
	// DayOrgs lists the orgs with events on day.
	DayOrgs(ctx context.Context, day time.Time) ([]string, error)
	// DropDay drops the day's events and their id claims (ClickHouse
	// keeps claims in 30-day partitions, dropped with the last day of
	// theirs) and returns how many events went; a day already dropped is
	// no error.
	DropDay(ctx context.Context, day time.Time) (int64, error)
}

// DayCompactor is an events store whose ended days read faster once each
// is merged into one part (ClickHouse: a day of one part is read without
// FINAL). CompactDays merges the days that ended at or before end and
// returns how many it merged (a day already merged is skipped, so a
// retry does nothing); progress follows each.
type DayCompactor interface {
	CompactDays(ctx context.Context, end time.Time, progress func(merged int)) (int, error)
}

// partitionOf is the partition of day's events on PostgreSQL.
func partitionOf(day time.Time) Partition {
	d := DayOf(day)
	return Partition{Name: partitionPrefix + d.Format("20060102"), Day: d}
}

// Days is DayPartitions.Days: the day partitions (none on SQLite).
func (s SQLEvents) Days(ctx context.Context) ([]time.Time, error) {
	parts, err := ListPartitions(ctx, s.DB)
	if err != nil {
		return nil, err
	}
	out := make([]time.Time, len(parts))
	for i, p := range parts {
		out[i] = p.Day
	}
	return out, nil
}

// DayOrgs is DayPartitions.DayOrgs (PartitionOrgs).
func (s SQLEvents) DayOrgs(ctx context.Context, day time.Time) ([]string, error) {
	return PartitionOrgs(ctx, s.DB, partitionOf(day))
}

// DropDay is DayPartitions.DropDay (DropPartition).
func (s SQLEvents) DropDay(ctx context.Context, day time.Time) (int64, error) {
	return DropPartition(ctx, s.DB, partitionOf(day))
}
