package results

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/datatypes"
	"gorm.io/gorm"
)

// Reasons a run leaves an event of its experiment out, in the order they
// are checked: an event gets the first that applies.
const (
	LeftBeforeStart  = "before_start" // stamped before the window's start
	LeftAfterEnd     = "after_end"    // stamped at or after the window's end
	LeftUnexposed    = "unexposed"    // its user had no exposure in the window at or before it
	LeftUnattributed = "unattributed" // its user's first exposure names a variant outside the allocation
	LeftCrossover    = "crossover"    // its user was exposed to more than one variant
)

// leftOutOrder is the order of Coverage.LeftOut: every reason, always.
var leftOutOrder = []string{LeftBeforeStart, LeftAfterEnd, LeftUnexposed, LeftUnattributed, LeftCrossover}

// Tally counts events of one kind of a run: distinct users, exposures and
// other events (model calls and business events).
type Tally struct {
	Users     int64 `json:"users"`
	Exposures int64 `json:"exposures"`
	Events    int64 `json:"events"`
}

// LeftOut is what a run left out for one reason, with the reason in words.
type LeftOut struct {
	Reason string `json:"reason"`
	Tally
	Detail string `json:"detail"`
}

// Coverage says what a run counted and what it left out, and why: every
// event of the experiment, whatever its time, lands in Counted or in
// exactly one LeftOut entry.
type Coverage struct {
	Counted Tally     `json:"counted"`
	LeftOut []LeftOut `json:"left_out"`
}

// CountCoverage sorts every event of the experiment into counted or one
// left-out reason, the way Aggregate decides (the first exposure in the
// window gives the user's arm; crossover users are left out). It reads
// the experiment's events once: window functions per user rather than a
// join to the exposed users, whose row count planners misjudge.
func CountCoverage(ctx context.Context, db *gorm.DB, orgID, experimentID string, w Window, arms []string) (Coverage, error) {
	const inWindowExposure = "e.type = 'exposure' AND e.ts >= ? AND e.ts < ?"
	// Users are counted per (user, reason) first: the rows arrive grouped
	// by user from the window functions, so this grouping needs no sort of
	// every event, where COUNT(DISTINCT user_id) per reason sorted them all.
	q := `SELECT reason, COUNT(*), CAST(SUM(exposures) AS BIGINT), CAST(SUM(events) AS BIGINT) FROM (
SELECT reason, user_id, SUM(is_exposure) AS exposures, COUNT(*) - SUM(is_exposure) AS events FROM (
  SELECT user_id, is_exposure,
    CASE WHEN ts < ? THEN '` + LeftBeforeStart + `'
      WHEN ts >= ? THEN '` + LeftAfterEnd + `'
      WHEN first_ts IS NULL OR ts < first_ts THEN '` + LeftUnexposed + `'
      WHEN first_variant NOT IN ? THEN '` + LeftUnattributed + `'
      WHEN vmin <> vmax THEN '` + LeftCrossover + `'
      ELSE 'counted' END AS reason
  FROM (
    SELECT e.user_id, e.ts, CASE WHEN e.type = 'exposure' THEN 1 ELSE 0 END AS is_exposure,
      MIN(CASE WHEN ` + inWindowExposure + ` THEN e.ts END) OVER u AS first_ts,
      MIN(CASE WHEN ` + inWindowExposure + ` THEN e.variant END) OVER u AS vmin,
      MAX(CASE WHEN ` + inWindowExposure + ` THEN e.variant END) OVER u AS vmax,
      FIRST_VALUE(e.variant) OVER (PARTITION BY e.user_id ORDER BY CASE WHEN ` + inWindowExposure + ` THEN 0 ELSE 1 END, e.ts, e.event_id) AS first_variant
    FROM events e` + dialectOf(db).exposureIndex + `
    WHERE e.org_id = ? AND e.experiment_id = ?
    WINDOW u AS (PARTITION BY e.user_id)
  ) p
) c GROUP BY user_id, reason
) u GROUP BY reason`
	args := []any{w.Start, w.End, arms}
	for range 4 {
		args = append(args, w.Start, w.End)
	}
	args = append(args, orgID, experimentID)
	rows, err := db.WithContext(ctx).Raw(q, args...).Rows()
	if err != nil {
		return Coverage{}, fmt.Errorf("count coverage of %s: %w", experimentID, err)
	}
	defer rows.Close()
	byReason := map[string]Tally{}
	for rows.Next() {
		var reason string
		var t Tally
		if err := rows.Scan(&reason, &t.Users, &t.Exposures, &t.Events); err != nil {
			return Coverage{}, fmt.Errorf("scan coverage of %s: %w", experimentID, err)
		}
		byReason[reason] = t
	}
	if err := rows.Err(); err != nil {
		return Coverage{}, fmt.Errorf("read coverage of %s: %w", experimentID, err)
	}
	c := Coverage{Counted: byReason["counted"]}
	for _, r := range leftOutOrder {
		c.LeftOut = append(c.LeftOut, LeftOut{Reason: r, Tally: byReason[r], Detail: describeLeftOut(r, w)})
	}
	return c, nil
}

// describeLeftOut says in words why events are left out for reason r.
func describeLeftOut(r string, w Window) string {
	switch r {
	case LeftBeforeStart:
		start := "the experiment's creation"
		if w.RetentionTruncated {
			start = "the plan's retention limit"
		}
		return "stamped before the window's start " + w.Start.Format(time.RFC3339Nano) + " (" + start + ")"
	case LeftAfterEnd:
		return "stamped at or after the window's end " + w.End.Format(time.RFC3339Nano) + " (the run's end: a manual run counts up to its whole second; or the experiment's ship)"
	case LeftUnexposed:
		return "their user had no exposure in the window at or before the event"
	case LeftUnattributed:
		return "their user's first exposure names a variant outside the allocation"
	case LeftCrossover:
		return "their user was exposed to more than one variant"
	}
	return r
}

// Summary is a line saying what a coverage counted and left out, for
// messages such as the results route's 404.
func (c Coverage) Summary() string {
	s := fmt.Sprintf("counted %d users, %d exposures, %d other events", c.Counted.Users, c.Counted.Exposures, c.Counted.Events)
	for _, l := range c.LeftOut {
		if l.Exposures+l.Events > 0 {
			s += fmt.Sprintf("; left out %d exposures and %d other events %s (%s)", l.Exposures, l.Events, l.Reason, l.Detail)
		}
	}
	return s
}

// RecordCoverage stores a run's coverage, and why it has no result rows
// when it has none (noResults, "" otherwise). Repeating it is harmless.
func RecordCoverage(ctx context.Context, db *gorm.DB, experimentID, computedFor string, c Coverage, noResults string) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode coverage: %w", err)
	}
	err = db.WithContext(ctx).Model(&Run{}).Where("experiment_id = ? AND computed_for = ?", experimentID, computedFor).
		Updates(map[string]any{"coverage": datatypes.JSON(b), "no_results": noResults}).Error
	if err != nil {
		return fmt.Errorf("record coverage of run %s of %s: %w", computedFor, experimentID, err)
	}
	return nil
}

// DecodeCoverage reads a run's stored coverage; ok is false for a run
// recorded before coverage was counted (or still analysing).
func (r Run) DecodeCoverage() (c Coverage, ok bool, err error) {
	if len(r.Coverage) == 0 || string(r.Coverage) == "null" {
		return Coverage{}, false, nil
	}
	if err := json.Unmarshal(r.Coverage, &c); err != nil {
		return Coverage{}, false, fmt.Errorf("decode coverage of run %s: %w", r.ComputedFor, err)
	}
	return c, true, nil
}
