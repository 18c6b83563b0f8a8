package results

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/expd/expd/database"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/vocab"
)

// Incremental results (docs/results.md, "Incremental results"): every
// ended UTC day of an experiment is rolled up once into per-user partial
// aggregates (result_rollups), and a run reads those plus, for the day its
// window ends in, the events themselves. Sums are exact, so the per-user
// values equal the full query's bit for bit.

// RollupGrace is how long after its end a day is first rolled up: an event
// received just before midnight and committed just after is still in it.
// Until then the day is read from events, like an open day.
const RollupGrace = 5 * time.Minute

// RollupMaxRowsPerEvent is the most rollup rows per event of the stored
// days at which a run reads rollups: above it they are no smaller than
// the events they sum (users with few events a day: one model call is
// one row per expression) and reading the events is faster
// (docs/results.md, "Benchmark: nightly run of a 90-day-old experiment").
// Tests and the benchmark raise it to force the rollup path.
var RollupMaxRowsPerEvent = 1.0

// RollupUse says how a run's per-user values were read.
type RollupUse struct {
	Full     string // non-empty: the whole window was read from events, and why
	Reused   int    // days read from their stored rollup
	Rolled   int    // days rolled up (again) by this run
	OpenDay  string // the day read from events (its window ends in it), if any
	Requires int    // days the window covers
}

// rollupExpr is one metric expression a rollup sums: its key (kind and
// source, the same for every metric that reads the same values), its
// condition and value over events e, and the condition's arguments. pre:
// a CUPED metric reads it, so its rows also carry the user's pre-period
// sum and count (s_pre, n_pre: the org's events in the PrePeriodDays
// before the day's first exposure), stored under the key "pre " + key.
type rollupExpr struct {
	key, cond, value string
	args             []any
	pre              bool
}

// rollupKeys are the keys a day rolled up with exprs stores and must
// cover: each expression's, and its pre-period's.
func rollupKeys(exprs []rollupExpr) []string {
	var keys []string
	for _, e := range exprs {
		keys = append(keys, e.key)
		if e.pre {
			keys = append(keys, "pre "+e.key)
		}
	}
	return keys
}

// anyPre tells whether a rollup with exprs carries pre-period sums.
func anyPre(exprs []rollupExpr) bool {
	return slices.ContainsFunc(exprs, func(e rollupExpr) bool { return e.pre })
}

// dayMark is the late-event version a day's rollup depends on: the day's
// own, plus, when it carries pre-period sums, those of the PrePeriodDays
// before it (versions only grow, so their sum moves whenever one does).
func dayMark(marks map[string]int64, day time.Time, pre bool) int64 {
	m := marks[day.Format(dayLayout)]
	if pre {
		for i := 1; i <= PrePeriodDays; i++ {
			m += marks[day.AddDate(0, 0, -i).Format(dayLayout)]
		}
	}
	return m
}

// exprVersion is part of every expression key: a change to what
// metricExpr selects or sums must raise it, so stored days computed the old
// way no longer cover the new keys and are rolled up again.
const exprVersion = "1"

// exprKey names a metric expression in result_rollups.expr.
func exprKey(kind vocab.Kind, src experiments.MetricSource) string {
	key := []string{exprVersion, string(kind), string(src.EventType), src.Field, src.BusinessMetric}
	if src.EventType == vocab.TypeScore {
		// Appended only here, so the keys of event sources stay as stored.
		key = append(key, src.Score, src.ScoreSource)
	}
	b, _ := json.Marshal(key)
	return string(b)
}

// rollupPlan is how a run reads its window incrementally: the metric
// expressions (sorted by key), each metric's numerator and denominator
// key, the stored days [from, to] and the open day, if any.
type rollupPlan struct {
	exprs    []rollupExpr
	num, den []string
	from, to string
	open     *dayRange
	use      RollupUse
}

// dayRange is one UTC day of a window: exposures count from
// exposuresFrom (the window's start on its first day), events from the
// day's start, both up to `to` (the day's end, or the window's end).
type dayRange struct {
	day                     string
	exposuresFrom, from, to time.Time
}

// rollupExprs lists the distinct expressions of ms (quantile metrics and
// unresolved ones have none) and each metric's keys.
func rollupExprs(d dialect, ms []metrics.Resolved) ([]rollupExpr, []string, []string, error) {
	byKey := map[string]rollupExpr{}
	num, den := make([]string, len(ms)), make([]string, len(ms))
	add := func(m metrics.Resolved, kind vocab.Kind, src experiments.MetricSource) (string, error) {
		key := exprKey(kind, src)
		if _, ok := byKey[key]; !ok {
			cond, value, args, err := metricExpr(m.Name, kind, src, "e", d.float)
			if err != nil {
				return "", err
			}
			byKey[key] = rollupExpr{key: key, cond: cond, value: value, args: args}
		}
		return key, nil
	}
	for i, m := range ms {
		if !HasUserColumns(m) {
			continue
		}
		var err error
		if num[i], err = add(m, m.Kind.AggregatedAs(), *m.Source); err != nil {
			return nil, nil, nil, err
		}
		if d := DenominatorOf(m); d != nil {
			if den[i], err = add(m, DenominatorKind(*d), *d); err != nil {
				return nil, nil, nil, err
			}
		}
		if m.UsesCUPED() {
			e := byKey[num[i]]
			e.pre = true
			byKey[num[i]] = e
		}
	}
	exprs := make([]rollupExpr, 0, len(byKey))
	for _, e := range byKey {
		exprs = append(exprs, e)
	}
	slices.SortFunc(exprs, func(a, b rollupExpr) int { return strings.Compare(a.key, b.key) })
	return exprs, num, den, nil
}

// rollupDay records how a day of an experiment was rolled up (table
// result_rollup_days).
type rollupDay struct {
	ExperimentID  string `gorm:"primaryKey"`
	Day           string `gorm:"primaryKey"`
	OrgID         string
	ExposuresFrom time.Time
	Exprs         string // keys, one per line
	Mark          int64  // the day's late-event version it saw
	RollupRows    int64  // rollup rows of the day
	EventCount    int64  // the experiment's events of the day
	RolledAt      time.Time
}

func (rollupDay) TableName() string { return "result_rollup_days" }

// covers tells whether the stored day holds every key.
func (r rollupDay) covers(keys []string) bool {
	have := strings.Split(r.Exprs, "\n")
	for _, k := range keys {
		if !slices.Contains(have, k) {
			return false
		}
	}
	return true
}

// planRollups splits the window into ended days, read from rollups (rolled
// up now when missing, computed with other expressions or another
// exposure bound, or behind their late-event mark), and the day the window
// ends in, read from events. It returns nil, with the reason in use.Full,
// when the window cannot be read that way: a window cut by retention in
// the middle of a day (a manual run of an old experiment), or an ended
// day before the last one that is not yet rollable.
func planRollups(ctx context.Context, db *gorm.DB, orgID, experimentID string, w Window, ms []metrics.Resolved, now time.Time) (*rollupPlan, RollupUse, error) {
	if w.Empty() {
		return nil, RollupUse{Full: "empty window"}, nil
	}
	first := w.Start.UTC().Truncate(24 * time.Hour)
	if w.RetentionTruncated && !w.Start.Equal(first) {
		return nil, RollupUse{Full: "window cut by retention within a day"}, nil
	}
	d := dialectOf(db)
	exprs, num, den, err := rollupExprs(d, ms)
	if err != nil {
		return nil, RollupUse{}, err
	}
	p := &rollupPlan{exprs: exprs, num: num, den: den, from: first.Format(dayLayout)}
	var ended []dayRange
	for day := first; day.Before(w.End); day = day.AddDate(0, 0, 1) {
		end := day.AddDate(0, 0, 1)
		r := dayRange{day: day.Format(dayLayout), exposuresFrom: maxTime(day, w.Start), from: day, to: minTime(end, w.End)}
		p.use.Requires++
		switch {
		case !end.After(w.End) && !end.After(now.Add(-RollupGrace)):
			ended = append(ended, r)
		case end.Before(w.End):
			return nil, RollupUse{Full: "a day before the window's last has not ended " + RollupGrace.String() + " ago"}, nil
		default:
			p.open = &r
			p.use.OpenDay = r.day
		}
	}
	p.to = first.AddDate(0, 0, len(ended)-1).Format(dayLayout) // before from when none
	if len(ended) == 0 {
		return p, p.use, nil
	}
	var stored []rollupDay
	if err := db.WithContext(ctx).Where("org_id = ? AND experiment_id = ? AND day >= ? AND day <= ?", orgID, experimentID, p.from, p.to).
		Find(&stored).Error; err != nil {
		return nil, RollupUse{}, fmt.Errorf("read rollup days of %s: %w", experimentID, err)
	}
	byDay := make(map[string]rollupDay, len(stored))
	for _, s := range stored {
		byDay[s.Day] = s
	}
	pre := anyPre(exprs)
	marks, err := ingest.DayMarks(ctx, db, orgID, ended[0].from.AddDate(0, 0, -PrePeriodDays), ended[len(ended)-1].from)
	if err != nil {
		return nil, RollupUse{}, err
	}
	keys := rollupKeys(exprs)
	var rows, events int64
	for _, r := range ended {
		s, ok := byDay[r.day]
		if ok && s.ExposuresFrom.Equal(r.exposuresFrom) && s.covers(keys) && s.Mark >= dayMark(marks, r.from, pre) {
			p.use.Reused++
			rows, events = rows+s.RollupRows, events+s.EventCount
			continue
		}
		s, err := rollUpDay(ctx, db, orgID, experimentID, r, exprs, now)
		if err != nil {
			return nil, RollupUse{}, err
		}
		p.use.Rolled++
		rows, events = rows+s.RollupRows, events+s.EventCount
	}
	if float64(rows) > RollupMaxRowsPerEvent*float64(events) {
		// Stored all the same: later days may be denser.
		p.use.Full = fmt.Sprintf("the rollups are not smaller than the events (%d rows for %d events)", rows, events)
		return nil, p.use, nil
	}
	if p.use.Rolled > 1 && database.IsPostgres(db) {
		// Days rolled up in bulk (the first run of an experiment, a metric
		// added, a late import) leave the planner's row counts far behind,
		// and the statement that follows joins on them.
		if err := db.WithContext(ctx).Exec("ANALYZE result_rollups").Error; err != nil {
			return nil, RollupUse{}, fmt.Errorf("analyze rollups: %w", err)
		}
	}
	return p, p.use, nil
}

// rollUpDay (re)writes one ended day's rollup in one transaction, with the
// late-event mark read before the events, so an event stored meanwhile
// leaves the day behind its mark and it is rolled up again next time.
func rollUpDay(ctx context.Context, db *gorm.DB, orgID, experimentID string, r dayRange, exprs []rollupExpr, now time.Time) (rollupDay, error) {
	d := dialectOf(db)
	keys := rollupKeys(exprs)
	var row rollupDay
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		marks, err := ingest.DayMarks(ctx, tx, orgID, r.from.AddDate(0, 0, -PrePeriodDays), r.from)
		if err != nil {
			return err
		}
		// The upsert comes first: it locks the day, so two runs rolling it
		// up at once take turns instead of colliding on the rows.
		row = rollupDay{ExperimentID: experimentID, Day: r.day, OrgID: orgID, ExposuresFrom: r.exposuresFrom,
			Exprs: strings.Join(keys, "\n"), Mark: dayMark(marks, r.from, anyPre(exprs)), RolledAt: now}
		if err := tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "experiment_id"}, {Name: "day"}},
			DoUpdates: clause.AssignmentColumns([]string{"exposures_from", "exprs", "mark", "rollup_rows", "event_count", "rolled_at"}),
		}).Create(&row).Error; err != nil {
			return err
		}
		if err := tx.Exec(`DELETE FROM result_rollups WHERE experiment_id = ? AND day = ?`, experimentID, r.day).Error; err != nil {
			return err
		}
		ctes, args := dayCTEs(d, "n", orgID, experimentID, r, exprs)
		args = append(args, experimentID, r.day, orgID)
		ins := tx.Exec(`WITH `+ctes+`
INSERT INTO result_rollups (experiment_id, day, user_id, expr, org_id, first_ts, first_event_id, variant, vmin, vmax, s_all, n_all, s_after, n_after, s_pre, n_pre)
SELECT CAST(? AS `+d.uuid+`), CAST(? AS TEXT), user_id, expr, CAST(? AS `+d.uuid+`), first_ts, first_event_id, variant, vmin, vmax, s_all, n_all, s_after, n_after, s_pre, n_pre FROM nr`, args...)
		if ins.Error != nil {
			return ins.Error
		}
		row.RollupRows = ins.RowsAffected
		if err := tx.Raw(`SELECT COUNT(*) FROM events`+d.exposureIndex+` WHERE org_id = ? AND experiment_id = ? AND ts >= ? AND ts < ?`,
			orgID, experimentID, r.from, r.to).Scan(&row.EventCount).Error; err != nil {
			return err
		}
		return tx.Model(&rollupDay{}).Where("experiment_id = ? AND day = ?", experimentID, r.day).
			Updates(map[string]any{"rollup_rows": row.RollupRows, "event_count": row.EventCount}).Error
	})
	if err != nil {
		return rollupDay{}, fmt.Errorf("roll up %s of experiment %s: %w", r.day, experimentID, err)
	}
	return row, nil
}

// dayCTEs are the common table expressions <p>x, <p>f, <p>a and <p>r that
// compute one day's rollup rows from events (<p>r has the columns of
// result_rollups from user_id on): the day's first exposure per user
// (ts, event_id) and its least and greatest variant, and per expression
// the exact sum and count of the user's events of the day, all of them
// and those at or after that first exposure; for expressions with pre,
// the exact sum and count over the org's events in the PrePeriodDays
// before that first exposure. Only users with an exposure, a matching
// event or (pre) pre-period data get rows.
func dayCTEs(d dialect, p, orgID, experimentID string, r dayRange, exprs []rollupExpr) (string, []any) {
	sql := p + `x AS (
  SELECT user_id, variant, ts, event_id, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts, event_id) AS rn,
    MIN(variant) OVER (PARTITION BY user_id) AS vmin, MAX(variant) OVER (PARTITION BY user_id) AS vmax
  FROM events` + d.exposureIndex + `
  WHERE org_id = ? AND experiment_id = ? AND type = 'exposure' AND ts >= ? AND ts < ?
), ` + p + `f AS (
  SELECT user_id, variant, ts AS first_ts, event_id AS first_event_id, vmin, vmax FROM ` + p + `x WHERE rn = 1
)`
	args := []any{orgID, experimentID, r.exposuresFrom, r.to}
	// The sums are typed: with no expression to union with, PostgreSQL
	// would take a bare NULL for text and refuse the union with the
	// stored NUMERIC rows (an experiment without metrics).
	union := []string{`SELECT user_id, CAST('' AS TEXT) AS expr, first_ts, first_event_id, variant, vmin, vmax,
    CAST(NULL AS NUMERIC) AS s_all, 0 AS n_all, CAST(NULL AS NUMERIC) AS s_after, 0 AS n_after,
    CAST(NULL AS NUMERIC) AS s_pre, 0 AS n_pre FROM ` + p + `f`}
	var unionArgs []any
	if len(exprs) > 0 {
		var cols []string
		for j, e := range exprs {
			after := e.cond + " AND e.ts >= f.first_ts"
			cols = append(cols,
				d.exactSum(fmt.Sprintf("CASE WHEN %s THEN %s END", e.cond, e.value))+fmt.Sprintf(" AS sa%d", j),
				fmt.Sprintf("COUNT(CASE WHEN %s THEN 1 END) AS na%d", e.cond, j),
				d.exactSum(fmt.Sprintf("CASE WHEN %s THEN %s END", after, e.value))+fmt.Sprintf(" AS sf%d", j),
				fmt.Sprintf("COUNT(CASE WHEN %s THEN 1 END) AS nf%d", after, j))
			for range 4 {
				args = append(args, e.args...)
			}
		}
		sql += `, ` + p + `a AS (
  SELECT e.user_id, ` + strings.Join(cols, ",\n    ") + `
  FROM events e` + d.exposureIndex + ` LEFT JOIN ` + p + `f f ON f.user_id = e.user_id
  WHERE e.org_id = ? AND e.experiment_id = ? AND e.ts >= ? AND e.ts < ?
  GROUP BY e.user_id
)`
		args = append(args, orgID, experimentID, r.from, r.to)
		// The pre-period of the users exposed on the day. Every one of them
		// has an event of the day (the exposure), so a row in <p>a.
		src := p + "a"
		var preCols, preJoined []string
		for j, e := range exprs {
			if e.pre {
				preCols = append(preCols, sumCount(d, e.cond, e.value, fmt.Sprint(j))...)
				preJoined = append(preJoined, fmt.Sprintf("pp.s%[1]d AS sp%[1]d, pp.n%[1]d AS np%[1]d", j))
				args = append(args, append(e.args, e.args...)...)
			}
		}
		if len(preCols) > 0 {
			sql += `, ` + p + `p AS (
  SELECT x.user_id, ` + strings.Join(preCols, ",\n    ") + `
  FROM ` + p + `f x JOIN events e` + d.orgIndex + ` ON e.org_id = ? AND e.user_id = x.user_id AND e.ts >= ` + d.preStart + ` AND e.ts < x.first_ts
  GROUP BY x.user_id
), ` + p + `b AS (
  SELECT a.*, ` + strings.Join(preJoined, ", ") + ` FROM ` + p + `a a LEFT JOIN ` + p + `p pp ON pp.user_id = a.user_id
)`
			args = append(args, orgID, d.preArg)
			src = p + "b"
		}
		for j, e := range exprs {
			row := fmt.Sprintf("SELECT user_id, CAST(? AS TEXT), NULL, NULL, NULL, NULL, NULL, sa%[1]d, na%[1]d, sf%[1]d, nf%[1]d, ", j)
			if e.pre {
				row += fmt.Sprintf("sp%[1]d, COALESCE(np%[1]d, 0) FROM %[2]s WHERE na%[1]d > 0 OR np%[1]d > 0", j, src)
			} else {
				row += fmt.Sprintf("NULL, 0 FROM %[2]s WHERE na%[1]d > 0", j, src)
			}
			union = append(union, row)
			unionArgs = append(unionArgs, e.key)
		}
	}
	sql += `, ` + p + `r AS (
  ` + strings.Join(union, "\n  UNION ALL ") + `
)`
	return sql, append(args, unionArgs...)
}

// rollupExposedCTE is exposedCTE over rollups: the stored days of the plan
// and its open day (computed from events), in the CTE r, then each user's
// first exposure over those days (first_day: its day) and crossover flag.
func rollupExposedCTE(d dialect, orgID, experimentID string, p *rollupPlan) (string, []any) {
	sql := "WITH "
	var args []any
	if p.open != nil {
		ctes, a := dayCTEs(d, "n", orgID, experimentID, *p.open, p.exprs)
		sql += ctes + ", "
		args = append(args, a...)
	}
	sql += `r AS MATERIALIZED (
  SELECT user_id, day, expr, first_ts, first_event_id, variant, vmin, vmax, s_all, n_all, s_after, n_after, s_pre, n_pre
  FROM result_rollups WHERE org_id = ? AND experiment_id = ? AND day >= ? AND day <= ?`
	args = append(args, orgID, experimentID, p.from, p.to)
	if p.open != nil {
		sql += `
  UNION ALL SELECT user_id, CAST(? AS TEXT), expr, first_ts, first_event_id, variant, vmin, vmax, s_all, n_all, s_after, n_after, s_pre, n_pre FROM nr`
		args = append(args, p.open.day)
	}
	sql += `
), firsts AS (
  SELECT user_id, variant, first_ts, day, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY first_ts, first_event_id) AS rn,
    MIN(vmin) OVER (PARTITION BY user_id) AS vmin, MAX(vmax) OVER (PARTITION BY user_id) AS vmax
  FROM r WHERE expr = ''
), exposed AS (
  SELECT user_id, variant, first_ts, day AS first_day, CASE WHEN vmin <> vmax THEN 1 ELSE 0 END AS crossover FROM firsts WHERE rn = 1
)
`
	return sql, args
}

// rollupSum is one pair of agg's columns, s<name> and n<name>: the sum
// and count of the rollup rows of key from the user's first exposure day
// on, or (pre) the pre-period sum and count stored with that day.
type rollupSum struct {
	name, key string
	pre       bool
}

// rollupSums is the CTE agg: per user, each sum's exact sum and count over
// the rollup rows (names as the metric columns of buildAggregateQuery). On
// the first exposure day only the part at or after the first exposure
// counts, on later days all of it; the pre-period comes from the first
// exposure day alone. The first day comes from a window over r, not a
// join with exposed, so the plan does not hinge on the planner's guess of
// a CTE's size.
func rollupSums(d dialect, sums []rollupSum) (string, []any) {
	pick := func(col string) string {
		return fmt.Sprintf("CASE WHEN rd.expr = ? THEN (CASE WHEN rd.day = rd.first_day THEN rd.%[1]s_after ELSE rd.%[1]s_all END) END", col)
	}
	pickPre := func(col string) string {
		return fmt.Sprintf("CASE WHEN rd.expr = ? AND rd.day = rd.first_day THEN rd.%s_pre END", col)
	}
	var cols []string
	var args []any
	for _, sum := range sums {
		p := pick
		if sum.pre {
			p = pickPre
		}
		cols = append(cols, d.exactSum(p("s"))+" AS s"+sum.name, "SUM("+p("n")+") AS n"+sum.name)
		args = append(args, sum.key, sum.key)
	}
	return `, agg AS (
  SELECT rd.user_id, ` + strings.Join(cols, ",\n    ") + `
  FROM (SELECT r.*, MIN(CASE WHEN r.expr = '' THEN r.day END) OVER (PARTITION BY r.user_id) AS first_day FROM r) rd
  WHERE rd.expr <> '' AND rd.day >= rd.first_day
  GROUP BY rd.user_id
)
`, args
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
