package results

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/metrics"
)

// Reading the experiment's events one by one (as opposed to per-user
// sums, which rollups can stand in for) is needed twice in a run: for the
// coverage (every event of the experiment, whatever its time, sorted into
// counted or a reason it was left out) and for the per-call values of
// quantile metrics. Both follow from the same walk over each user's
// events in time order, so a run reads them once, here; the database
// only streams an index range, and the per-user rules run in Go.

// passRow is one event of the current user, in (ts, event_id) order.
type passRow struct {
	ts       time.Time
	pos      int8 // where ts falls: 0 before the window, 1 in it, 2 at or after its end
	exposure bool
	variant  string // exposures only
	vals     int    // offset of its quantile values in userPass.vals
}

// userPass holds one user's rows while the pass is on them; it is reused
// from user to user.
type userPass struct {
	rows []passRow
	vals []float64 // NaN: the event carries no value of that metric
}

// eventPass is the state of one read: what it counts and what it collects.
type eventPass struct {
	w          Window
	started    bool
	arms       map[string]bool // the allocation's variants
	collect    map[string]*Arm // where the calls go (nil: coverage only)
	quantiles  []int           // indices of the quantile metrics in ms
	byReason   map[string]*Tally
	user       userPass
	userID     []byte
	reasonSeen map[string]bool
	hasCalls   []bool // per quantile metric: the current user's offset is written
}

// readEvents reads every event of the experiment once, by user, time and
// id. It returns the run's coverage (the rules of Aggregate: a user's
// first exposure in the window by (ts, event_id) gives their arm; events
// before it are unexposed; crossover users are left out) and, when s is
// non-nil, appends to s's arms the per-call values of the quantile
// metrics of ms, user by user, of the users it counts.
func readEvents(ctx context.Context, db *gorm.DB, orgID, experimentID string, w Window, arms []string, ms []metrics.Resolved, s *Sample) (Coverage, error) {
	d := dialectOf(db)
	p, quantiles := newEventPass(w, arms, ms, s)
	var cols []string
	var args []any
	args = append(args, w.Start, w.End)
	for _, i := range quantiles {
		m := ms[i]
		cond, value, condArgs, err := metricExpr(m.Name, m.Kind.AggregatedAs(), *m.Source, "e", d.float)
		if err != nil {
			return Coverage{}, err
		}
		cols = append(cols, fmt.Sprintf("CASE WHEN %s THEN %s END", cond, value))
		args = append(args, condArgs...)
	}
	q := `SELECT e.user_id, e.ts, CASE WHEN e.ts < ? THEN 0 WHEN e.ts >= ? THEN 2 ELSE 1 END,
  CASE WHEN e.type = 'exposure' THEN 1 ELSE 0 END, e.variant`
	for _, c := range cols {
		q += ",\n  " + c
	}
	q += "\nFROM events e" + d.userIndex + "\nWHERE e.org_id = ? AND e.experiment_id = ?\nORDER BY e.user_id, e.ts, e.event_id"
	args = append(args, orgID, experimentID)
	rows, err := db.WithContext(ctx).Raw(q, args...).Rows()
	if err != nil {
		return Coverage{}, fmt.Errorf("read events of %s: %w", experimentID, err)
	}
	defer rows.Close()
	// The ids are scanned as raw bytes: one string per event would keep
	// the garbage collector busy.
	var user, variant sql.RawBytes
	var ts time.Time
	var pos, exposure int8
	vals := make([]sql.NullFloat64, len(p.quantiles))
	dest := []any{&user, &ts, &pos, &exposure, &variant}
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	var row []float64
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return Coverage{}, fmt.Errorf("scan events of %s: %w", experimentID, err)
		}
		row = row[:0]
		for _, v := range vals {
			row = append(row, nullToNaN(v))
		}
		p.Add(user, ts, pos, exposure == 1, variant, row)
	}
	if err := rows.Err(); err != nil {
		return Coverage{}, fmt.Errorf("read events of %s: %w", experimentID, err)
	}
	return p.Finish(), nil
}

// newEventPass starts a walk over the events of window w; with s, it
// collects into s the per-call values of the quantile metrics of ms
// (ReadsCalls), whose values Add takes in the order of quantiles.
func newEventPass(w Window, arms []string, ms []metrics.Resolved, s *Sample) (p *eventPass, quantiles []int) {
	p = &eventPass{w: w, arms: map[string]bool{}, byReason: map[string]*Tally{}, reasonSeen: map[string]bool{}}
	for _, a := range arms {
		p.arms[a] = true
	}
	if s != nil {
		p.collect = s.Arms
		for i, m := range ms {
			if ReadsCalls(m) {
				p.quantiles = append(p.quantiles, i)
			}
		}
	}
	p.hasCalls = make([]bool, len(p.quantiles))
	return p, p.quantiles
}

// Add takes the next event: its user, time, where the time falls (0
// before the window, 1 in it, 2 at or after its end), whether it is an
// exposure, its variant, and its value of each quantile metric (NaN:
// none).
func (p *eventPass) Add(user []byte, ts time.Time, pos int8, exposure bool, variant []byte, vals []float64) {
	if !p.started || !bytes.Equal(user, p.userID) {
		if p.started {
			p.endUser()
		}
		p.started, p.userID = true, append(p.userID[:0], user...)
	}
	r := passRow{ts: ts, pos: pos, exposure: exposure, vals: len(p.user.vals)}
	if r.exposure {
		r.variant = string(variant)
	}
	p.user.vals = append(p.user.vals, vals...)
	p.user.rows = append(p.user.rows, r)
}

// Finish ends the walk and returns the coverage it counted.
func (p *eventPass) Finish() Coverage {
	if p.started {
		p.endUser()
	}
	closeCalls(p.collect, p.quantiles)
	tallies := make(map[string]Tally, len(p.byReason))
	for r, t := range p.byReason {
		tallies[r] = *t
	}
	return NewCoverage(p.w, tallies)
}

// CoverageReasons are the reasons a run sorts an event into: counted,
// then every left-out reason in Coverage.LeftOut's order.
var CoverageReasons = append([]string{Counted}, leftOutOrder...)

// NewCoverage is the Coverage of window w from the tallies by reason
// (CoverageReasons; a reason missing counts nothing).
func NewCoverage(w Window, tallies map[string]Tally) Coverage {
	c := Coverage{Counted: tallies[Counted]}
	for _, r := range leftOutOrder {
		c.LeftOut = append(c.LeftOut, LeftOut{Reason: r, Detail: describeLeftOut(r, w), Tally: tallies[r]})
	}
	return c
}

func nullToNaN(v sql.NullFloat64) float64 {
	if !v.Valid {
		return math.NaN()
	}
	return v.Float64
}

// endUser sorts the current user's events into reasons and collects the
// calls of a counted user, then clears the user.
func (p *eventPass) endUser() {
	rows := p.user.rows
	first := -1
	var vmin, vmax string
	for i, r := range rows {
		if !r.exposure || r.pos != 1 {
			continue
		}
		if first < 0 {
			first, vmin, vmax = i, r.variant, r.variant
		}
		vmin, vmax = min(vmin, r.variant), max(vmax, r.variant)
	}
	attributed := first >= 0 && p.arms[rows[first].variant]
	var arm *Arm // nil: no calls to collect
	if attributed {
		arm = p.collect[rows[first].variant]
	}
	clear(p.reasonSeen)
	clear(p.hasCalls)
	for _, r := range rows {
		reason := Counted
		switch {
		case r.pos == 0:
			reason = LeftBeforeStart
		case r.pos == 2:
			reason = LeftAfterEnd
		case first < 0 || r.ts.Before(rows[first].ts):
			reason = LeftUnexposed
		case !attributed:
			reason = LeftUnattributed
		case vmin != vmax:
			reason = LeftCrossover
		}
		t := p.byReason[reason]
		if t == nil {
			t = &Tally{}
			p.byReason[reason] = t
		}
		if !p.reasonSeen[reason] {
			p.reasonSeen[reason] = true
			t.Users++
		}
		if r.exposure {
			t.Exposures++
		} else {
			t.Events++
		}
		if reason != Counted || arm == nil {
			continue
		}
		for j, mi := range p.quantiles {
			v := p.user.vals[r.vals+j]
			if math.IsNaN(v) {
				continue
			}
			calls := &arm.Calls[mi]
			if !p.hasCalls[j] {
				p.hasCalls[j] = true
				calls.Offsets = append(calls.Offsets, len(calls.Values))
			}
			calls.Values = append(calls.Values, v)
		}
	}
	for j, mi := range p.quantiles {
		if p.hasCalls[j] {
			sortLastUser(&arm.Calls[mi])
		}
	}
	p.user.rows, p.user.vals = p.user.rows[:0], p.user.vals[:0]
}
