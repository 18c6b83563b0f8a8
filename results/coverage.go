package results

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/datatypes"
	"gorm.io/gorm"
)

// Counted is the coverage reason of an event the run counts.
const Counted = "counted"

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
	// OrphanScores, for a run with score metrics, counts the scores they
	// read whose call never arrived (Orphans.Total).
	OrphanScores *int64 `json:"orphan_scores,omitempty"`
}

// CountCoverage sorts every event of the experiment into counted or one
// left-out reason, the way Aggregate decides (the first exposure in the
// window gives the user's arm; crossover users are left out), in one read
// of the experiment's events (eventpass.go). A run whose Sample already
// holds its Coverage (it read the events for a quantile metric) does not
// need it.
func CountCoverage(ctx context.Context, db *gorm.DB, orgID, experimentID string, w Window, arms []string) (Coverage, error) {
	return readEvents(ctx, db, orgID, experimentID, w, arms, nil, nil)
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
		return "stamped at or after the window's end " + w.End.Format(time.RFC3339Nano) + " (the run's end: a manual run counts up to the whole second after it was asked for; or the experiment's ship)"
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
