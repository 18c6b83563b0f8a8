package results

import (
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/expd/expd/database"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/vocab"
)

// PrePeriodDays is CUPED's pre-period: the days before each user's first
// exposure whose events give the covariate (docs/results.md).
const PrePeriodDays = 14

// aggregateQuery is the one SQL statement of a run: it finds each exposed
// user's first exposure in the window (their arm, docs/architecture.md §5) and whether
// they were also exposed to another variant (a crossover user), and folds
// every event the user produced from that exposure to the window's end into
// two numbers per metric: the sum and the count of the matching values
// (for a ratio metric also of its denominator). For CUPED metrics it adds
// the same two numbers over the user's pre-period events of the org, any
// experiment. The database does the GROUP BY; Go receives one row per
// user. These per-user sums and counts are what a per-user rollup would
// store.
type aggregateQuery struct {
	SQL  string
	Args []any
}

// dialect holds what differs between PostgreSQL and SQLite.
type dialect struct {
	float, uuid                        string
	exactSum                           func(x string) string // exact SUM of x (exactsum.go)
	exposureIndex, userIndex, orgIndex string
	preStart                           string // SQL for first_ts minus the pre-period, one argument
	preArg                             any
	// eventIDs is the table keyed by (org_id, event_id) that tells whether
	// an event id is stored: event_ids beside PostgreSQL's partitioned
	// events, the events table itself on SQLite.
	eventIDs string
}

func dialectOf(db *gorm.DB) dialect {
	if database.IsPostgres(db) {
		return dialect{float: "DOUBLE PRECISION", uuid: "UUID", exactSum: func(x string) string { return "SUM(CAST(" + x + " AS NUMERIC))" }, preStart: "x.first_ts - CAST(? AS INTERVAL)", preArg: fmt.Sprintf("%d days", PrePeriodDays), eventIDs: "event_ids"}
	}
	// SQLite plans without table statistics and, left alone, walks the
	// org's events by time once per user; it is told which index to use.
	// Timestamps are text there, compared as text to the millisecond.
	return dialect{float: "REAL", uuid: "TEXT", exactSum: func(x string) string { return "expd_exact_sum(" + x + ")" }, exposureIndex: " INDEXED BY events_experiment_ts", userIndex: " INDEXED BY events_experiment_user_ts",
		orgIndex: " INDEXED BY events_org_user_ts", preStart: "strftime('%Y-%m-%d %H:%M:%f', x.first_ts, ?)", preArg: fmt.Sprintf("-%d days", PrePeriodDays), eventIDs: "events"}
}

// exposedCTE finds each exposed user's first exposure in the window and
// flags crossover users (more than one variant seen).
func exposedCTE(d dialect, orgID, experimentID string, w Window) (string, []any) {
	return `WITH firsts AS (
  SELECT user_id, variant, ts, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts, event_id) AS rn,
    MIN(variant) OVER (PARTITION BY user_id) AS vmin, MAX(variant) OVER (PARTITION BY user_id) AS vmax
  FROM events` + d.exposureIndex + `
  WHERE org_id = ? AND experiment_id = ? AND type = 'exposure' AND ts >= ? AND ts < ?
), exposed AS (
  SELECT user_id, variant, ts AS first_ts, CASE WHEN vmin <> vmax THEN 1 ELSE 0 END AS crossover FROM firsts WHERE rn = 1
)
`, []any{orgID, experimentID, w.Start, w.End}
}

// sumCount is the pair of aggregate columns of one expression; the sum
// is exact (exactsum.go).
func sumCount(d dialect, cond, value, name string) []string {
	return []string{d.exactSum(fmt.Sprintf("CASE WHEN %s THEN %s END", cond, value)) + " AS s" + name,
		fmt.Sprintf("COUNT(CASE WHEN %s THEN 1 END) AS n%s", cond, name)}
}

// buildAggregateQuery writes the query for the metrics over events of one
// experiment in [start, end). Metrics with a Problem and quantile metrics
// (read event by event, eventpass.go) get no columns. With a rollup plan
// the per-user sums and the CUPED pre-period come from day rollups
// (rollup.go) instead of the events themselves; both give the same rows.
func buildAggregateQuery(db *gorm.DB, orgID, experimentID string, w Window, ms []metrics.Resolved, p *rollupPlan) (aggregateQuery, error) {
	d := dialectOf(db)
	var cols, preCols []string
	var sums []rollupSum
	var colArgs, preArgs []any
	for i, m := range ms {
		if !HasUserColumns(m) {
			continue
		}
		kind, den := m.Kind.AggregatedAs(), DenominatorOf(m)
		if p != nil {
			// Summed per user in the CTE agg (rollupSums); the pre-period
			// too, from the rollup of the first exposure day.
			mine := []rollupSum{{name: fmt.Sprint(i), key: p.num[i]}}
			if den != nil {
				mine = append(mine, rollupSum{name: fmt.Sprintf("d%d", i), key: p.den[i]})
			}
			if m.UsesCUPED() {
				mine = append(mine, rollupSum{name: fmt.Sprintf("p%d", i), key: p.num[i], pre: true})
			}
			for _, sum := range mine {
				cols = append(cols, fmt.Sprintf("agg.s%[1]s AS s%[1]s", sum.name), fmt.Sprintf("COALESCE(agg.n%[1]s, 0) AS n%[1]s", sum.name))
			}
			sums = append(sums, mine...)
			continue
		}
		cond, value, args, err := metricExpr(m.Name, kind, *m.Source, "e", d.float)
		if err != nil {
			return aggregateQuery{}, err
		}
		// Each condition appears twice, so its arguments do too.
		cols = append(cols, sumCount(d, cond, value, fmt.Sprint(i))...)
		colArgs = append(colArgs, append(args, args...)...)
		if den != nil {
			cond, value, args, err := metricExpr(m.Name, DenominatorKind(*den), *den, "e", d.float)
			if err != nil {
				return aggregateQuery{}, err
			}
			cols = append(cols, sumCount(d, cond, value, fmt.Sprintf("d%d", i))...)
			colArgs = append(colArgs, append(args, args...)...)
		}
		if m.UsesCUPED() {
			cond, value, args, err := metricExpr(m.Name, kind, *m.Source, "p", d.float)
			if err != nil {
				return aggregateQuery{}, err
			}
			preCols = append(preCols, sumCount(d, cond, value, fmt.Sprintf("p%d", i))...)
			preArgs = append(preArgs, append(args, args...)...)
			// The final GROUP BY folds the user's events: pre's one row
			// per user goes through MAX.
			cols = append(cols, fmt.Sprintf("MAX(pre.sp%d) AS sp%d", i, i), fmt.Sprintf("COALESCE(MAX(pre.np%d), 0) AS np%d", i, i))
		}
	}
	var sql string
	var args []any
	if p != nil {
		sql, args = rollupExposedCTE(d, orgID, experimentID, p)
		if len(sums) > 0 {
			aggSQL, aggArgs := rollupSums(d, sums)
			sql, args = sql+aggSQL, append(args, aggArgs...)
		}
	} else {
		sql, args = exposedCTE(d, orgID, experimentID, w)
	}
	if len(cols) == 0 {
		return aggregateQuery{SQL: sql + "SELECT user_id, variant, first_ts, crossover FROM exposed ORDER BY user_id", Args: args}, nil
	}
	preJoin := ""
	if len(preCols) > 0 {
		sql += `, pre AS (
  SELECT x.user_id, ` + strings.Join(preCols, ", ") + `
  FROM exposed x JOIN events p` + d.orgIndex + ` ON p.org_id = ? AND p.user_id = x.user_id AND p.ts >= ` + d.preStart + ` AND p.ts < x.first_ts
  GROUP BY x.user_id
)
`
		args = append(args, preArgs...)
		args = append(args, orgID, d.preArg)
		preJoin = "\nLEFT JOIN pre ON pre.user_id = x.user_id"
	}
	sql += "SELECT x.user_id, x.variant, x.first_ts, x.crossover,\n  " + strings.Join(cols, ",\n  ") + "\nFROM exposed x\n"
	if p != nil {
		if len(sums) > 0 {
			sql += "LEFT JOIN agg ON agg.user_id = x.user_id"
		}
		return aggregateQuery{SQL: sql + byUser, Args: args}, nil
	}
	args = append(args, colArgs...)
	if w.AllExperiments {
		// The user's events of every experiment: the org's (org, user, ts) index.
		sql += `LEFT JOIN events e` + d.orgIndex + ` ON e.org_id = ? AND e.user_id = x.user_id AND e.ts >= x.first_ts AND e.ts < ?`
		args = append(args, orgID, w.End)
	} else {
		sql += `LEFT JOIN events e` + d.userIndex + ` ON e.org_id = ? AND e.experiment_id = ? AND e.user_id = x.user_id AND e.ts >= x.first_ts AND e.ts < ?`
		args = append(args, orgID, experimentID, w.End)
	}
	sql += preJoin + `
GROUP BY x.user_id, x.variant, x.first_ts, x.crossover` + byUser
	return aggregateQuery{SQL: sql, Args: args}, nil
}

// byUser orders the per-user rows: the statistics add values up in row
// order, and float addition depends on it, so both ways of computing the
// rows (events or rollups) must hand them over in the same order.
const byUser = "\nORDER BY x.user_id"

// calls is the source that counts a user's model calls: a per-call
// ratio's denominator, and a score metric's count of calls.
var calls = experiments.MetricSource{EventType: vocab.TypeModelCall}

// DenominatorOf is the second per-user column pair of m, nil when it has
// none: a ratio's denominator, or the calls of a score metric (scored
// calls / calls is its coverage, and users with calls but no score are
// its unscored users).
func DenominatorOf(m metrics.Resolved) *experiments.MetricSource {
	switch {
	case m.Kind.Spec().NeedsDenominator:
		return m.Denominator
	case m.Source != nil && m.Source.EventType == vocab.TypeScore:
		return &calls
	}
	return nil
}

// DenominatorKind: a denominator naming a model_call field sums it;
// otherwise it counts its events.
func DenominatorKind(s experiments.MetricSource) vocab.Kind {
	if s.EventType == vocab.TypeModelCall && s.Field != "" {
		return vocab.Sum
	}
	return vocab.Count
}

// metricExpr returns the SQL condition selecting the events (table alias
// a) that feed a metric aggregated as kind (its entry's Selection) from
// src, the value each contributes (as a float), and the condition's
// arguments. A model_call source without a field (a ratio's denominator)
// is every call.
func metricExpr(name string, kind vocab.Kind, src experiments.MetricSource, a, float string) (cond, value string, args []any, err error) {
	return MetricExpr(name, kind, src, a, float, func(src experiments.MetricSource, indicator bool) string {
		return scoreValue(src, indicator, a, float)
	})
}

// MetricExpr is metricExpr for any engine's SQL: float is its float
// type, and score gives the value of a call (alias a) for a score
// source, NULL when the call has none (scoreValue is the SQL engine's).
func MetricExpr(name string, kind vocab.Kind, src experiments.MetricSource, a, float string, score func(src experiments.MetricSource, indicator bool) string) (cond, value string, args []any, err error) {
	spec, ok := vocab.Spec(kind)
	if !ok {
		return "", "", nil, fmt.Errorf("metric %q: unknown kind %q", name, kind)
	}
	eventType := src.EventType
	switch src.EventType {
	case vocab.TypeScore:
		// Each model call of the user with its score (a call without one
		// is NULL, not selected): scoreValue.
		eventType, value = vocab.TypeModelCall, score(src, spec.ZeroOne)
		spec = spec.ForSource(vocab.TypeScore)
	case vocab.TypeModelCall:
		// Field names go into SQL text: only the table's are accepted.
		f, known := vocab.ModelCallField(src.Field)
		switch {
		case known && f.Metric == vocab.Indicator:
			value = fmt.Sprintf("(CASE WHEN %[1]s.%[2]s IS NOT NULL AND %[1]s.%[2]s <> '' THEN 1.0 ELSE 0.0 END)", a, f.Name)
		case known && f.Metric == vocab.Numeric:
			value = fmt.Sprintf("CAST(%s.%s AS %s)", a, f.Name, float)
		case src.Field == "" && spec.Reduce == vocab.ReduceCount:
			value = "1.0"
		default:
			return "", "", nil, fmt.Errorf("metric %q: unknown %s field %q", name, vocab.TypeModelCall, src.Field)
		}
	case vocab.TypeBusinessEvent:
		value, args = a+".value", []any{src.BusinessMetric}
	case vocab.TypeExposure:
		value = "1.0"
	default:
		return "", "", nil, fmt.Errorf("metric %q: unknown event type %q", name, src.EventType)
	}
	cond = fmt.Sprintf("%s.type = '%s'", a, eventType)
	if src.EventType == vocab.TypeBusinessEvent {
		cond += fmt.Sprintf(" AND %s.business_metric = ?", a)
	}
	switch spec.Select {
	case vocab.SelectNonZero:
		if src.EventType == vocab.TypeBusinessEvent {
			// A business event marks the outcome whatever its value.
			break
		}
		cond += fmt.Sprintf(" AND COALESCE(%s, 0) <> 0", value)
	case vocab.SelectNotNull:
		cond += fmt.Sprintf(" AND %s IS NOT NULL", value)
	}
	return "(" + cond + ")", value, args, nil
}

// scoreValue is the SQL value of a model call (table alias a) for a
// score source: its stored score of src.Score (the latest: one row per
// call, name and source), of src.ScoreSource, or without one the mean
// over the sources that scored the call (each call counts once, however
// many sources scored it: docs/quality.md). indicator (a proportion)
// reads a score as 1 when non-zero, else 0. NULL when the call has no
// such score. The names are validated ([A-Za-z0-9._:-], a fixed set of
// sources) and written as quoted literals, so the value takes no
// arguments and fits wherever an event field's value does.
func scoreValue(src experiments.MetricSource, indicator bool, a, float string) string {
	v := "sc.value"
	if indicator {
		v = "CASE WHEN sc.value <> 0 THEN 1.0 ELSE 0.0 END"
	}
	where := fmt.Sprintf("sc.org_id = %[1]s.org_id AND sc.call_id = %[1]s.event_id AND sc.name = %[2]s", a, sqlString(src.Score))
	if src.ScoreSource != "" {
		where += " AND sc.source = " + sqlString(src.ScoreSource)
	}
	return fmt.Sprintf("(SELECT CAST(AVG(%s) AS %s) FROM scores sc WHERE %s)", v, float, where)
}

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
