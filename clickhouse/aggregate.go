package clickhouse

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/results"
	"github.com/expd/expd/vocab"
)

var _ results.Aggregator = (*Store)(nil)

// A run's reads go to every shard at once, each over its local tables:
// a user's events sit on one shard (the sharding key), so each shard
// aggregates its own users, and the rows, sorted by user on each shard,
// are merged in Go by user. Scores are sharded by call, so each shard
// reads the scores of the run's metrics from the whole cluster (the
// scores Distributed table) and joins them to its calls. There are no
// day rollups: ClickHouse reads an experiment's events faster than
// PostgreSQL reads their rollups (docs/scale.md).

// floatType is the SQL type metric values are cast to (nullable: a
// model call without the field has no value).
const floatType = "Nullable(Float64)"

// runQuery is what one run's reads share: the metric expressions' score
// columns and the events subquery they read.
type runQuery struct {
	s         *Store
	orgID     string
	scoreCols []string          // the scores subquery's columns
	scoreOf   map[string]string // value expression by score source key
}

func newRunQuery(s *Store, orgID string) *runQuery {
	return &runQuery{s: s, orgID: orgID, scoreOf: map[string]string{}}
}

// score is results.MetricExpr's score value: the mean of the call's
// scores of src over its sources (or of src.ScoreSource), NULL when it
// has none, from the scores joined to the call.
func (q *runQuery) score(src experiments.MetricSource, indicator bool) string {
	key := fmt.Sprintf("%s\x00%s\x00%v", src.Score, src.ScoreSource, indicator)
	if v, ok := q.scoreOf[key]; ok {
		return v
	}
	j := len(q.scoreOf)
	cond := "name = " + quote(src.Score)
	if src.ScoreSource != "" {
		cond += " AND source = " + quote(src.ScoreSource)
	}
	v := "value"
	if indicator {
		v = "if(value <> 0, 1.0, 0.0)"
	}
	q.scoreCols = append(q.scoreCols, fmt.Sprintf("avgIf(%s, %s) AS sc%d_v", v, cond, j), fmt.Sprintf("countIf(%s) AS sc%d_n", cond, j))
	expr := fmt.Sprintf("if(e.sc%[1]d_n > 0, e.sc%[1]d_v, NULL)", j)
	q.scoreOf[key] = expr
	return expr
}

// expr is results.MetricExpr on ClickHouse: a condition that is 0 or 1
// (never NULL) and a value.
func (q *runQuery) expr(name string, kind vocab.Kind, src experiments.MetricSource) (cond, value string, args []any, err error) {
	cond, value, args, err = results.MetricExpr(name, kind, src, "e", floatType, q.score)
	return "ifNull(" + cond + ", 0)", value, args, err
}

// events is the subquery of the org's events matching scope, each once
// (FINAL), with the score columns of the metrics read so far: call expr
// for every metric before it.
func (q *runQuery) events(scope string) string {
	cols := append([]string{"org_id", "event_id", "type", "experiment_id", "user_id", "variant", "ts", "business_metric", "value"}, vocab.ModelCallColumns()...)
	join := ""
	if len(q.scoreCols) > 0 {
		for j := range len(q.scoreOf) {
			cols = append(cols, fmt.Sprintf("sc%d_v", j), fmt.Sprintf("sc%d_n", j))
		}
		join = "\n  ANY LEFT JOIN (SELECT call_id AS event_id, " + strings.Join(q.scoreCols, ", ") + " FROM " + q.s.t(q.s.scores) +
			" FINAL WHERE org_id = " + quote(q.orgID) + " GROUP BY call_id) USING event_id"
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM " + q.s.t("events_local") + " FINAL" + join +
		"\n  WHERE org_id = " + quote(q.orgID) + " AND " + scope
}

// Aggregate is results.Aggregator's Aggregate: one query per shard, its
// users' sums and counts, merged by user.
func (s *Store) Aggregate(ctx context.Context, orgID, experimentID string, w results.Window, arms []string, ms []metrics.Resolved, now time.Time, progress func(users int)) (results.Sample, results.RollupUse, error) {
	use := results.RollupUse{Full: "ClickHouse reads events"}
	q := newRunQuery(s, orgID)
	start, end := micros(w.Start), micros(w.End)
	inExp := fmt.Sprintf("e.experiment_id = %s AND e.ts >= x_first AND e.ts < %d", quote(experimentID), end)
	inPre := fmt.Sprintf("e.ts >= x_first - %d AND e.ts < x_first", int64(results.PrePeriodDays)*int64(24*time.Hour/time.Microsecond))
	var cols []string
	var args []any
	sumCount := func(cond, value string, condArgs []any, scope string) {
		c := cond + " AND " + scope
		cols = append(cols, fmt.Sprintf("ifNull(sumIf(toFloat64(ifNull(%s, 0)), %s), 0)", value, c), fmt.Sprintf("countIf(%s)", c))
		args = append(args, condArgs...)
		args = append(args, condArgs...)
	}
	cuped := false
	for _, m := range ms {
		if !results.HasUserColumns(m) {
			continue
		}
		kind := m.Kind.AggregatedAs()
		cond, value, condArgs, err := q.expr(m.Name, kind, *m.Source)
		if err != nil {
			return results.Sample{}, use, err
		}
		sumCount(cond, value, condArgs, inExp)
		if den := results.DenominatorOf(m); den != nil {
			cond, value, condArgs, err := q.expr(m.Name, results.DenominatorKind(*den), *den)
			if err != nil {
				return results.Sample{}, use, err
			}
			sumCount(cond, value, condArgs, inExp)
		}
		if m.UsesCUPED() {
			cuped = true
			sumCount(cond, value, condArgs, inPre)
		}
	}
	scope := fmt.Sprintf("experiment_id = %s AND ts < %d", quote(experimentID), end)
	if cuped {
		scope = fmt.Sprintf("(%s OR ts >= %d AND ts < %d)", scope, start-int64(results.PrePeriodDays)*int64(24*time.Hour/time.Microsecond), end)
	}
	exposed := fmt.Sprintf(`SELECT user_id, argMin(variant, (ts, event_id)) AS x_variant, min(ts) AS x_first, toUInt8(uniqExact(variant) > 1) AS x_crossover
  FROM %s FINAL WHERE org_id = %s AND experiment_id = %s AND type = 'exposure' AND ts >= %d AND ts < %d GROUP BY user_id`,
		s.t("events_local"), quote(orgID), quote(experimentID), start, end)
	sql := "SELECT user_id, any(x_variant), any(x_first), any(x_crossover)"
	for _, c := range cols {
		sql += ",\n  " + c
	}
	sql += "\nFROM (" + q.events(scope) + ") AS e\nALL INNER JOIN (" + exposed + ") USING user_id\nGROUP BY user_id ORDER BY user_id"

	b := results.NewSampleBuilder(arms, ms, progress)
	type row struct {
		user, variant string
		first         int64
		crossover     uint8
		sums          []float64
		counts        []uint64
	}
	n := len(cols) / 2
	uc := make([]results.UserColumns, len(ms))
	err := s.eachShard(ctx, sql, args, func() ([]any, *string, func()) {
		r := &row{sums: make([]float64, n), counts: make([]uint64, n)}
		dest := []any{&r.user, &r.variant, &r.first, &r.crossover}
		for i := range n {
			dest = append(dest, &r.sums[i], &r.counts[i])
		}
		return dest, &r.user, func() {
			k := 0
			next := func() (float64, int64) { k++; return r.sums[k-1], int64(r.counts[k-1]) }
			for i, m := range ms {
				if !results.HasUserColumns(m) {
					continue
				}
				var c results.UserColumns
				c.Sum, c.Count = next()
				if results.DenominatorOf(m) != nil {
					c.DenSum, c.DenCount = next()
				}
				if m.UsesCUPED() {
					c.PreSum, c.PreCount = next()
				}
				uc[i] = c
			}
			b.Add(r.user, r.variant, fromMicros(r.first), r.crossover != 0, uc)
		}
	})
	if err != nil {
		return results.Sample{}, use, fmt.Errorf("aggregate per-user values of %s: %w", experimentID, err)
	}
	sample := b.Sample()
	if slices.ContainsFunc(ms, results.ReadsCalls) {
		c, err := s.walk(ctx, orgID, experimentID, w, arms, ms, &sample)
		if err != nil {
			return results.Sample{}, use, err
		}
		sample.Coverage = &c
	}
	if slices.ContainsFunc(ms, results.ReadsScores) {
		o, err := s.orphans(ctx, orgID, w, ms)
		if err != nil {
			return results.Sample{}, use, err
		}
		sample.Orphans = &o
	}
	return sample, use, nil
}

// Coverage is results.Aggregator's Coverage: the walk over the
// experiment's events without quantile metrics.
func (s *Store) Coverage(ctx context.Context, orgID, experimentID string, w results.Window, arms []string) (results.Coverage, error) {
	return s.walk(ctx, orgID, experimentID, w, arms, nil, nil)
}

// walk streams every event of the experiment, by user, ts and event_id
// (each shard its users, merged by user), through a results.EventWalk.
func (s *Store) walk(ctx context.Context, orgID, experimentID string, w results.Window, arms []string, ms []metrics.Resolved, sample *results.Sample) (results.Coverage, error) {
	p, quantiles := results.NewEventWalk(w, arms, ms, sample)
	q := newRunQuery(s, orgID)
	var cols []string
	var args []any
	for _, i := range quantiles {
		m := ms[i]
		cond, value, condArgs, err := q.expr(m.Name, m.Kind.AggregatedAs(), *m.Source)
		if err != nil {
			return results.Coverage{}, err
		}
		cols = append(cols, fmt.Sprintf("if(%s, toFloat64(ifNull(%s, nan)), nan)", cond, value))
		args = append(args, condArgs...)
	}
	sql := fmt.Sprintf("SELECT e.user_id, e.ts, multiIf(e.ts < %d, 0, e.ts >= %d, 2, 1), toUInt8(e.type = 'exposure'), e.variant",
		micros(w.Start), micros(w.End))
	for _, c := range cols {
		sql += ",\n  " + c
	}
	sql += "\nFROM (" + q.events("experiment_id = "+quote(experimentID)) + ") AS e\nORDER BY e.user_id, e.ts, e.event_id"
	err := s.eachShard(ctx, sql, args, func() ([]any, *string, func()) {
		var user, variant string
		var ts int64
		var pos, exposure uint8
		vals := make([]float64, len(quantiles))
		dest := []any{&user, &ts, &pos, &exposure, &variant}
		for i := range vals {
			dest = append(dest, &vals[i])
		}
		return dest, &user, func() {
			p.Add([]byte(user), fromMicros(ts), int8(pos), exposure == 1, []byte(variant), vals)
		}
	})
	if err != nil {
		return results.Coverage{}, fmt.Errorf("read events of %s: %w", experimentID, err)
	}
	return p.Finish(), nil
}

// eachShard runs sql on every shard at once and calls the emit of each
// row in the order of the rows' user (the first column of ORDER BY on
// every shard), merging the shards' streams. newRow gives a shard's
// scan destinations, its user and the function that takes a scanned row.
func (s *Store) eachShard(ctx context.Context, sql string, args []any, newRow func() (dest []any, user *string, emit func())) error {
	type stream struct {
		rows driver.Rows
		dest []any
		user *string
		emit func()
		ok   bool
	}
	streams := make([]*stream, len(s.shards))
	defer func() {
		for _, st := range streams {
			if st != nil && st.rows != nil {
				st.rows.Close()
			}
		}
	}()
	for i, c := range s.shards {
		rows, err := c.Query(ctx, sql, args...)
		if err != nil {
			return fmt.Errorf("shard %d: %w", i+1, err)
		}
		st := &stream{rows: rows}
		st.dest, st.user, st.emit = newRow()
		streams[i] = st
	}
	advance := func(st *stream) error {
		if st.ok = st.rows.Next(); st.ok {
			return st.rows.Scan(st.dest...)
		}
		return st.rows.Err()
	}
	for _, st := range streams {
		if err := advance(st); err != nil {
			return err
		}
	}
	for {
		var next *stream
		for _, st := range streams {
			if st.ok && (next == nil || *st.user < *next.user) {
				next = st
			}
		}
		if next == nil {
			return nil
		}
		next.emit()
		if err := advance(next); err != nil {
			return err
		}
	}
}

// orphans is results' orphan count on ClickHouse: the scores of the
// window that the score metrics read, then which of their calls have a
// claim.
func (s *Store) orphans(ctx context.Context, orgID string, w results.Window, ms []metrics.Resolved) (results.Orphans, error) {
	o := results.Orphans{ByMetric: map[string]int64{}}
	var conds []string
	var scored []metrics.Resolved
	for _, m := range ms {
		if !results.ReadsScores(m) {
			continue
		}
		o.ByMetric[m.Name] = 0
		cond := "name = " + quote(m.Source.Score)
		if m.Source.ScoreSource != "" {
			cond += " AND source = " + quote(m.Source.ScoreSource)
		}
		conds, scored = append(conds, "("+cond+")"), append(scored, m)
	}
	if len(conds) == 0 {
		return o, nil
	}
	rows, err := s.conn.Query(ctx, "SELECT call_id, name, source FROM "+s.t(s.scores)+" FINAL WHERE org_id = ? AND ts >= ? AND ts < ? AND ("+strings.Join(conds, " OR ")+")",
		orgID, micros(w.Start), micros(w.End))
	if err != nil {
		return o, fmt.Errorf("count orphan scores of org %s: %w", orgID, err)
	}
	type sc struct{ call, name, source string }
	var all []sc
	var calls []string
	for rows.Next() {
		var r sc
		if err := rows.Scan(&r.call, &r.name, &r.source); err != nil {
			rows.Close()
			return o, fmt.Errorf("count orphan scores of org %s: %w", orgID, err)
		}
		all, calls = append(all, r), append(calls, r.call)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return o, fmt.Errorf("count orphan scores of org %s: %w", orgID, err)
	}
	have, err := s.existing(ctx, orgID, slices.Compact(slices.Sorted(slices.Values(calls))))
	if err != nil {
		return o, err
	}
	for _, r := range all {
		if have[r.call] {
			continue
		}
		o.Total++
		for _, m := range scored {
			if m.Source.Score == r.name && (m.Source.ScoreSource == "" || m.Source.ScoreSource == r.source) {
				o.ByMetric[m.Name]++
			}
		}
	}
	return o, nil
}

// Traffic is results.Aggregator's Traffic: unique exposed users per UTC
// day (the day number of ts) and variant, across the cluster.
func (s *Store) Traffic(ctx context.Context, orgID, experimentID string, from, to time.Time, variants []string) ([]ingest.TrafficDay, error) {
	first := from.UTC().Truncate(24 * time.Hour)
	last := to.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	const day = int64(24 * time.Hour / time.Microsecond)
	rows, err := s.conn.Query(ctx, "SELECT intDiv(ts, ?) AS d, variant, uniqExact(user_id) FROM "+s.t(s.events)+
		" WHERE org_id = ? AND experiment_id = ? AND type = 'exposure' AND ts >= ? AND ts < ? GROUP BY d, variant",
		day, orgID, experimentID, micros(first), micros(last))
	if err != nil {
		return nil, fmt.Errorf("count traffic: %w", err)
	}
	defer rows.Close()
	var counts []ingest.TrafficCount
	for rows.Next() {
		var d int64
		var c ingest.TrafficCount
		var users uint64
		if err := rows.Scan(&d, &c.Variant, &users); err != nil {
			return nil, fmt.Errorf("count traffic: %w", err)
		}
		c.Day, c.Users = fromMicros(d*day).Format(time.DateOnly), int64(users)
		counts = append(counts, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count traffic: %w", err)
	}
	return ingest.TrafficDays(from, to, variants, counts), nil
}

// ExposedUsers is results.Aggregator's ExposedUsers: the org's distinct
// exposed users in [from, to), across the cluster.
func (s *Store) ExposedUsers(ctx context.Context, orgID string, from, to time.Time) (int64, error) {
	var n uint64
	err := s.conn.QueryRow(ctx, "SELECT uniqExact(user_id) FROM "+s.t(s.events)+
		" WHERE org_id = ? AND type = 'exposure' AND ts >= ? AND ts < ?", orgID, micros(from), micros(to)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count exposed users: %w", err)
	}
	return int64(n), nil
}
