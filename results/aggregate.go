package results

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"gorm.io/gorm"

	"github.com/expd/expd/metrics"
)

// Arm holds the exposed users of one arm and their per-user value of each
// metric: Values[m][u] is user u's value of metric m, NaN when a mean
// metric has no value for the user. A metric that could not be resolved
// has no values.
type Arm struct {
	UserIDs []string
	Values  [][]float64
}

// Sample is the aggregation of a run: the arms by variant name. Users
// whose first exposure names a variant outside the allocation are counted
// in Unattributed and left out.
type Sample struct {
	Arms         map[string]*Arm
	Unattributed int64
}

// AggregateSQL returns the run's aggregation statement and its arguments,
// for EXPLAIN and for timing the bare query (bench/results).
func AggregateSQL(db *gorm.DB, orgID, experimentID string, w Window, ms []metrics.Resolved) (string, []any, error) {
	q, err := buildAggregateQuery(db, orgID, experimentID, w, ms)
	return q.SQL, q.Args, err
}

// progressEvery is how many users are read between progress reports.
const progressEvery = 50_000

// Aggregate runs the run's single GROUP BY query and collects the per-user
// values of ms by arm. arms lists the allocation's variants. progress, if
// set, is called as rows arrive (activities heartbeat from it).
func Aggregate(ctx context.Context, db *gorm.DB, orgID, experimentID string, w Window, arms []string, ms []metrics.Resolved, progress func(users int)) (Sample, error) {
	q, err := buildAggregateQuery(db, orgID, experimentID, w, ms)
	if err != nil {
		return Sample{}, err
	}
	s := Sample{Arms: make(map[string]*Arm, len(arms))}
	for _, v := range arms {
		s.Arms[v] = &Arm{Values: make([][]float64, len(ms))}
	}
	rows, err := db.WithContext(ctx).Raw(q.SQL, q.Args...).Rows()
	if err != nil {
		return Sample{}, fmt.Errorf("aggregate per-user values: %w", err)
	}
	defer rows.Close()
	var user, variant string
	sums := make([]sql.NullFloat64, len(ms))
	counts := make([]int64, len(ms))
	dest := []any{&user, &variant}
	var computed []int // metrics with columns, in column order
	for i, m := range ms {
		if m.Problem == "" {
			dest = append(dest, &sums[i], &counts[i])
			computed = append(computed, i)
		}
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return Sample{}, fmt.Errorf("scan per-user values: %w", err)
		}
		arm, ok := s.Arms[variant]
		if !ok {
			s.Unattributed++
			continue
		}
		arm.UserIDs = append(arm.UserIDs, user)
		for _, i := range computed {
			v, ok := perUserValue(ms[i].Kind, sums[i].Float64, counts[i])
			if !ok {
				v = math.NaN()
			}
			arm.Values[i] = append(arm.Values[i], v)
		}
		if n++; progress != nil && n%progressEvery == 0 {
			progress(n)
		}
	}
	if err := rows.Err(); err != nil {
		return Sample{}, fmt.Errorf("read per-user values: %w", err)
	}
	return s, nil
}
