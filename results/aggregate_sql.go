package results

import (
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/expd/expd/metrics"
	"github.com/expd/expd/models"
)

// aggregateQuery is the one SQL statement of a run: it finds each exposed
// user's first exposure in the window (their arm, docs/architecture.md §5) and folds
// every event the user produced from that exposure to the window's end into
// two numbers per metric: the sum and the count of the matching values.
// The database does the GROUP BY; Go receives one row per user.
type aggregateQuery struct {
	SQL  string
	Args []any
}

// buildAggregateQuery writes the query for the metrics over events of one
// experiment in [start, end). Metrics with a Problem get no columns.
func buildAggregateQuery(db *gorm.DB, orgID, experimentID string, w Window, ms []metrics.Resolved) (aggregateQuery, error) {
	// SQLite plans without table statistics and, left alone, walks the
	// org's events by time once per user; it is told which index to use.
	float, exposureIndex, userIndex := "REAL", " INDEXED BY events_experiment_ts", " INDEXED BY events_experiment_user_ts"
	if models.IsPostgres(db) {
		float, exposureIndex, userIndex = "DOUBLE PRECISION", "", ""
	}
	var cols []string
	var colArgs []any
	for i, m := range ms {
		if m.Problem != "" {
			continue
		}
		cond, value, args, err := metricExpr(m, float)
		if err != nil {
			return aggregateQuery{}, err
		}
		cols = append(cols,
			fmt.Sprintf("SUM(CASE WHEN %s THEN %s END) AS s%d", cond, value, i),
			fmt.Sprintf("COUNT(CASE WHEN %s THEN 1 END) AS n%d", cond, i))
		// The condition appears twice, so its arguments do too.
		colArgs = append(colArgs, args...)
		colArgs = append(colArgs, args...)
	}
	exposed := `WITH firsts AS (
  SELECT user_id, variant, ts, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts, event_id) AS rn
  FROM events` + exposureIndex + `
  WHERE org_id = ? AND experiment_id = ? AND type = 'exposure' AND ts >= ? AND ts < ?
), exposed AS (
  SELECT user_id, variant, ts AS first_ts FROM firsts WHERE rn = 1
)
`
	args := []any{orgID, experimentID, w.Start, w.End}
	if len(cols) == 0 {
		return aggregateQuery{SQL: exposed + "SELECT user_id, variant FROM exposed", Args: args}, nil
	}
	sql := exposed + "SELECT x.user_id, x.variant,\n  " + strings.Join(cols, ",\n  ") + `
FROM exposed x
LEFT JOIN events e` + userIndex + ` ON e.org_id = ? AND e.experiment_id = ? AND e.user_id = x.user_id AND e.ts >= x.first_ts AND e.ts < ?
GROUP BY x.user_id, x.variant`
	args = append(args, colArgs...)
	args = append(args, orgID, experimentID, w.End)
	return aggregateQuery{SQL: sql, Args: args}, nil
}

// modelCallColumns are the numeric model_call fields a metric may read;
// the names go into SQL text, so only these are accepted.
var modelCallColumns = map[string]bool{
	"latency_ms": true, "input_tokens": true, "output_tokens": true, "total_tokens": true,
	"cost_usd": true, "time_to_first_token_ms": true,
}

// metricExpr returns the SQL condition selecting the events that feed m,
// the value each contributes (as a float), and the condition's arguments.
// A proportion counts events whose value is non-zero (for error: an error
// was recorded); a mean only events that carry the value.
func metricExpr(m metrics.Resolved, float string) (cond, value string, args []any, err error) {
	src := m.Source
	switch src.EventType {
	case "model_call":
		switch {
		case src.Field == "error":
			value = "(CASE WHEN e.error IS NOT NULL AND e.error <> '' THEN 1.0 ELSE 0.0 END)"
		case modelCallColumns[src.Field]:
			value = fmt.Sprintf("CAST(e.%s AS %s)", src.Field, float)
		default:
			return "", "", nil, fmt.Errorf("metric %q: unknown model_call field %q", m.Name, src.Field)
		}
		cond = "e.type = 'model_call'"
	case "business_event":
		cond, value, args = "e.type = 'business_event' AND e.business_metric = ?", "e.value", []any{src.BusinessMetric}
	case "exposure":
		cond, value = "e.type = 'exposure'", "1.0"
	default:
		return "", "", nil, fmt.Errorf("metric %q: unknown event type %q", m.Name, src.EventType)
	}
	switch m.Kind {
	case "proportion":
		cond += fmt.Sprintf(" AND COALESCE(%s, 0) <> 0", value)
		if src.EventType == "business_event" {
			// A business event marks the outcome whatever its value.
			cond = "e.type = 'business_event' AND e.business_metric = ?"
		}
	case "mean":
		cond += fmt.Sprintf(" AND %s IS NOT NULL", value)
	case "sum", "count":
	default:
		return "", "", nil, fmt.Errorf("metric %q: unknown kind %q", m.Name, m.Kind)
	}
	return "(" + cond + ")", value, args, nil
}

// perUserValue turns a user's sum and count of matching values into the
// metric's per-user value (docs/architecture.md §6); ok is false when a mean metric
// has no value for the user, who is then left out of that metric.
func perUserValue(kind string, sum float64, count int64) (v float64, ok bool) {
	switch kind {
	case "proportion":
		if count > 0 {
			return 1, true
		}
		return 0, true
	case "count":
		return float64(count), true
	case "mean":
		if count == 0 {
			return 0, false
		}
		return sum / float64(count), true
	default: // sum: 0 for exposed users with none
		return sum, true
	}
}
