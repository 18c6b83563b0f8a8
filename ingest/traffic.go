package ingest

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/database"
	"github.com/expd/expd/vocab"
)

// TrafficDay is one day of the traffic timeline: unique exposed users per
// variant that day (UTC).
type TrafficDay struct {
	Day      string           `json:"day"`
	Variants map[string]int64 `json:"variants"`
}

// Traffic counts the experiment's unique exposed users per UTC day and
// variant, for every day from the date of from through the date of to.
// Every day is present, and every name in variants is present (0) on
// every day, so a timeline can be drawn without gaps.
func Traffic(ctx context.Context, db *gorm.DB, orgID, experimentID string, from, to time.Time, variants []string) ([]TrafficDay, error) {
	first := from.UTC().Truncate(24 * time.Hour)
	last := to.UTC().Truncate(24 * time.Hour)
	day := "strftime('%Y-%m-%d', ts)"
	if database.IsPostgres(db) {
		day = "to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
	}
	var rows []TrafficCount
	err := db.WithContext(ctx).Table("events").
		Select(day+" AS day, variant, COUNT(DISTINCT user_id) AS users").
		Where("org_id = ? AND experiment_id = ? AND type = ? AND ts >= ? AND ts < ?",
			orgID, experimentID, vocab.TypeExposure, first, last.Add(24*time.Hour)).
		Group(day + ", variant").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("count traffic: %w", err)
	}
	return TrafficDays(from, to, variants, rows), nil
}

// TrafficCount is one engine's count of unique exposed users of a
// variant on a UTC day (YYYY-MM-DD).
type TrafficCount struct {
	Day     string
	Variant string
	Users   int64
}

// TrafficDays lays counts out as Traffic returns them: every day from
// from's date through to's, every name of variants present on each.
func TrafficDays(from, to time.Time, variants []string, counts []TrafficCount) []TrafficDay {
	first := from.UTC().Truncate(24 * time.Hour)
	last := to.UTC().Truncate(24 * time.Hour)
	var days []TrafficDay
	index := make(map[string]int)
	for d := first; !d.After(last); d = d.Add(24 * time.Hour) {
		td := TrafficDay{Day: d.Format(time.DateOnly), Variants: make(map[string]int64, len(variants))}
		for _, v := range variants {
			td.Variants[v] = 0
		}
		index[td.Day] = len(days)
		days = append(days, td)
	}
	for _, r := range counts {
		if i, ok := index[r.Day]; ok {
			days[i].Variants[r.Variant] = r.Users
		}
	}
	return days
}

// ExposedUsers counts the org's distinct exposed users (of any of its
// experiments) with an exposure in [from, to): a user of several
// experiments counts once.
func ExposedUsers(ctx context.Context, db *gorm.DB, orgID string, from, to time.Time) (int64, error) {
	var n int64
	err := db.WithContext(ctx).Table("events").Select("COUNT(DISTINCT user_id)").
		Where("org_id = ? AND type = ? AND ts >= ? AND ts < ?", orgID, vocab.TypeExposure, from.UTC(), to.UTC()).Scan(&n).Error
	if err != nil {
		return 0, fmt.Errorf("count exposed users: %w", err)
	}
	return n, nil
}
