package clickhouse

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"regexp"
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
// are merged in Go by user. A quantile metric's calls come in the same
// row, packed in a string (packedFloats), and so does the user's
// coverage (its events by reason), added up in Go: one scan per shard,
// nothing read event by event into Go.
// Scores are sharded by call, so each shard
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

// events is the subquery of the org's events matching scope with ts in
// [from, to), each once (localEvents), with the score columns of the
// metrics read so far (call expr for every metric before it). Only the
// columns reader names (as e.column) are read, and user_id (and event_id
// with scores):
// a UNION ALL's columns are not pruned on 18.16, and every model-call
// column would read the prompts and responses.
func (q *runQuery) events(scope string, from, to int64, reader string, parts dayParts) string {
	named := map[string]bool{}
	for _, m := range columnRef.FindAllStringSubmatch(reader, -1) {
		named[m[1]] = true
	}
	// event_id is the scores' join key: read with scores only (its
	// random strings are the dearest column to read).
	named["event_id"] = named["event_id"] || len(q.scoreCols) > 0
	cols := []string{"user_id"}
	for _, c := range append([]string{"event_id", "org_id", "type", "experiment_id", "variant", "ts", "business_metric", "value"}, vocab.ModelCallColumns()...) {
		if named[c] {
			cols = append(cols, c)
		}
	}
	sql := q.s.localEvents(cols, q.orgID, scope, from, to, parts)
	if len(q.scoreCols) == 0 {
		return sql
	}
	for j := range len(q.scoreOf) {
		cols = append(cols, fmt.Sprintf("sc%d_v", j), fmt.Sprintf("sc%d_n", j))
	}
	// Joined outside the days' union: inside, every day would read the
	// cluster's scores again.
	return "SELECT " + strings.Join(cols, ", ") + " FROM (" + sql + ")\n  ANY LEFT JOIN (SELECT call_id AS event_id, " + strings.Join(q.scoreCols, ", ") +
		" FROM " + q.s.t(q.s.scores) + " FINAL WHERE org_id = " + quote(q.orgID) + " GROUP BY call_id) USING event_id"
}

// columnRef is a column of the events subquery named in the SQL that
// reads it (e.column).
var columnRef = regexp.MustCompile(`\be\.(\w+)`)

// localEvents is the SQL of the shard's events (its local table) of the
// org matching where with ts in [from, to), each once. A day that is one
// part on the shard (parts.plain) holds no copies and is read as it is,
// consecutive such days in one SELECT (compact.go); any other day is
// read with its own SELECT ... FINAL, in a UNION ALL. The copies of an
// event share the sorting key and the day (the partition), so a day's
// FINAL keeps the copy the table's FINAL keeps; 18.16 merges all the
// parts of a FINAL read in one stream (25 s at 5 M events a shard), one
// stream per day spreads the days over max_threads. parts nil: FINAL on
// every day.
func (s *Store) localEvents(cols []string, orgID, where string, from, to int64, parts dayParts) string {
	sel := func(final string, lo, hi int64) string {
		return fmt.Sprintf("SELECT %s FROM %s%s WHERE org_id = %s AND ts >= %d AND ts < %d AND %s",
			strings.Join(cols, ", "), s.t(eventsLocal), final, quote(orgID), lo, hi, where)
	}
	var reads []string
	plainFrom, plainTo := int64(0), int64(0) // the plain days read together, when plainTo > plainFrom
	flush := func() {
		if plainTo > plainFrom {
			reads = append(reads, sel("", plainFrom, plainTo))
		}
		plainFrom, plainTo = 0, 0
	}
	for d := floorDiv(from, dayMicros); d*dayMicros < to; d++ {
		lo, hi := max(from, d*dayMicros), min(to, (d+1)*dayMicros)
		if !parts.plain(d) {
			flush()
			reads = append(reads, sel(" FINAL", lo, hi))
			continue
		}
		if plainTo <= plainFrom {
			plainFrom = lo
		}
		plainTo = hi
	}
	flush()
	if len(reads) == 0 { // an empty window: no day, no row
		reads = append(reads, fmt.Sprintf("SELECT %s FROM %s WHERE 0", strings.Join(cols, ", "), s.t(eventsLocal)))
	}
	return strings.Join(reads, "\n  UNION ALL ")
}

// floorDiv is a / b rounded down (b > 0), for days before 1970 too.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// Aggregate is results.Aggregator's Aggregate: one query per shard, its
// users' sums and counts and the coverage, merged by user.
func (s *Store) Aggregate(ctx context.Context, orgID, experimentID string, w results.Window, arms []string, ms []metrics.Resolved, now time.Time, progress func(users int)) (results.Sample, results.RollupUse, error) {
	use := results.RollupUse{Full: "ClickHouse reads events"}
	q := newRunQuery(s, orgID)
	start, end := micros(w.Start), micros(w.End)
	inExp := fmt.Sprintf("e.experiment_id = %s AND e.ts >= x_first AND e.ts < %d", quote(experimentID), end)
	if w.AllExperiments {
		inExp = fmt.Sprintf("e.ts >= x_first AND e.ts < %d", end) // a holdout's run: every experiment's events
	}
	inPre := fmt.Sprintf("e.ts >= x_first - %d AND e.ts < x_first", int64(results.PrePeriodDays)*dayMicros)
	var cols []string
	var args []any
	n, nCalls := 0, 0 // the row's sum and count pairs; call arrays
	sumCount := func(cond, value string, condArgs []any, scope string) {
		c := cond + " AND " + scope
		cols = append(cols, fmt.Sprintf("ifNull(sumIf(toFloat64(ifNull(%s, 0)), %s), 0)", value, c), fmt.Sprintf("countIf(%s)", c))
		args = append(args, condArgs...)
		args = append(args, condArgs...)
		n++
	}
	cuped := false
	// slots are the metrics' places in a row, in column order, worked
	// out here once: the row loop below runs per user.
	type slot struct {
		metric            int
		calls, den, cuped bool
	}
	var slots []slot
	for mi, m := range ms {
		if results.ReadsCalls(m) {
			cond, value, condArgs, err := q.expr(m.Name, m.Kind.AggregatedAs(), *m.Source)
			if err != nil {
				return results.Sample{}, use, err
			}
			// A call without a value (NULL, NaN) is no call of the metric.
			// In any order: the SampleBuilder sorts a user's calls.
			v := fmt.Sprintf("toFloat64(ifNull(%s, nan))", value)
			cols = append(cols, packedFloats(fmt.Sprintf("groupArrayIf(%s, %s AND NOT isNaN(%s) AND %s)", v, cond, v, inExp)))
			args = append(args, condArgs...)
			slots, nCalls = append(slots, slot{metric: mi, calls: true}), nCalls+1
			continue
		}
		if !results.HasUserColumns(m) {
			continue
		}
		kind := m.Kind.AggregatedAs()
		cond, value, condArgs, err := q.expr(m.Name, kind, *m.Source)
		if err != nil {
			return results.Sample{}, use, err
		}
		sumCount(cond, value, condArgs, inExp)
		sl := slot{metric: mi, cuped: m.UsesCUPED()}
		if den := results.DenominatorOf(m); den != nil {
			cond, value, condArgs, err := q.expr(m.Name, results.DenominatorKind(*den), *den)
			if err != nil {
				return results.Sample{}, use, err
			}
			sumCount(cond, value, condArgs, inExp)
			sl.den = true
		}
		if sl.cuped {
			cuped = true
			sumCount(cond, value, condArgs, inPre)
		}
		slots = append(slots, sl)
	}
	// The coverage is counted in the same read (as the SQL engine's event
	// walk counts it, eventpass.go): each event of the experiment gets
	// its reason's index in CoverageReasons, an event of another
	// experiment (read for the pre-period or a holdout) none, and each
	// user's row carries, per reason, its exposures << 32 | its events
	// (eachCoverage).
	reason := fmt.Sprintf("multiIf(e.experiment_id <> %s, %d, e.ts < %d, 1, e.ts >= %d, 2, x_exp = 0 OR e.ts < x_first, 3, x_attributed = 0, 4, x_crossover = 1, 5, 0)",
		quote(experimentID), len(results.CoverageReasons), start, end)
	for r := range results.CoverageReasons {
		cols = append(cols, fmt.Sprintf("bitOr(bitShiftLeft(countIf(%[1]s = %[2]d AND e.type = '%[3]s'), 32), countIf(%[1]s = %[2]d))", reason, r, vocab.TypeExposure))
	}
	// Without FINAL: a copy of an exposure changes neither the first
	// exposure, its variant nor the variants seen. Left joined: a user
	// with events of the experiment and no exposure in the window is
	// counted in the coverage.
	attributed := "0"
	if len(arms) > 0 {
		attributed = "x_variant IN " + quoteList(arms)
	}
	exposed := fmt.Sprintf("SELECT user_id, count() > 0 AS x_exp, argMin(variant, (ts, event_id)) AS x_variant, min(ts) AS x_first, toUInt8(uniqExact(variant) > 1) AS x_crossover, %s AS x_attributed\n  FROM %s WHERE org_id = %s AND experiment_id = %s AND type = '%s' AND ts >= %d AND ts < %d GROUP BY user_id",
		attributed, s.t(eventsLocal), quote(orgID), quote(experimentID), vocab.TypeExposure, start, end)
	// Every event the metrics read is after a first exposure (>= start)
	// or, for CUPED, in the pre-period before it; the coverage reads all
	// of the experiment's events, whatever their time (the days of its
	// first and last on each shard). A holdout's run (AllExperiments)
	// and the CUPED pre-period read every experiment's events: the org's
	// window. (An IN of the exposed users there read no fewer rows:
	// user_id is not a prefix of the sorting key. It ran once per day.)
	// The rows of users with neither an exposure in the window nor an
	// event of the experiment are dropped before the GROUP BY.
	from, scope := start, "experiment_id = "+quote(experimentID)
	if cuped {
		from = start - int64(results.PrePeriodDays)*dayMicros
	}
	if w.AllExperiments || cuped {
		scope = fmt.Sprintf("(%s OR (ts >= %d AND ts < %d))", scope, from, end)
	}
	head := "SELECT user_id, any(x_exp), any(x_variant), any(x_first), any(x_crossover)"
	for _, c := range cols {
		head += ",\n  " + c
	}
	keep := "\nWHERE x_exp OR e.experiment_id = " + quote(experimentID)
	spans, err := s.experimentSpans(ctx, orgID, experimentID)
	if err != nil {
		return results.Sample{}, use, err
	}
	sql := func(i int, parts dayParts) string {
		lo, hi := from, end
		if sp := spans[i]; sp.events > 0 {
			lo, hi = min(lo, sp.first), max(hi, sp.last+1)
		}
		return head + "\nFROM (" + q.events(scope, lo, hi, head+keep, parts) + ") AS e\nANY LEFT JOIN (" + exposed + ") USING user_id" + keep + "\nGROUP BY user_id ORDER BY user_id"
	}

	type row struct {
		user, variant  string
		exp, crossover uint8
		first          int64
		sums           []float64
		counts         []uint64
		calls          []packedCalls
		cov            []uint64
	}
	uc := make([]results.UserColumns, len(ms))
	var newRow func() ([]any, *string, func())
	var b *results.SampleBuilder
	var tallies coverageTallies
	read := func(views []dayParts) error {
		b, tallies = results.NewSampleBuilder(arms, ms, progress), make(coverageTallies, len(results.CoverageReasons))
		return s.eachShard(ctx, func(i int) string { return sql(i, views[i]) }, args, newRow)
	}
	newRow = func() ([]any, *string, func()) {
		r := &row{sums: make([]float64, n), counts: make([]uint64, n), calls: make([]packedCalls, nCalls), cov: make([]uint64, len(results.CoverageReasons))}
		dest := []any{&r.user, &r.exp, &r.variant, &r.first, &r.crossover}
		k, j := 0, 0
		pair := func() { dest, k = append(dest, &r.sums[k], &r.counts[k]), k+1 }
		for _, sl := range slots {
			if sl.calls {
				dest, j = append(dest, &r.calls[j]), j+1
				continue
			}
			pair()
			if sl.den {
				pair()
			}
			if sl.cuped {
				pair()
			}
		}
		for i := range r.cov {
			dest = append(dest, &r.cov[i])
		}
		return dest, &r.user, func() {
			tallies.add(r.cov)
			if r.exp == 0 { // in the coverage only: no exposure in the window
				return
			}
			k, j := 0, 0
			next := func() (float64, int64) { k++; return r.sums[k-1], int64(r.counts[k-1]) }
			for _, sl := range slots {
				if sl.calls {
					uc[sl.metric], j = results.UserColumns{Calls: r.calls[j]}, j+1
					continue
				}
				var c results.UserColumns
				c.Sum, c.Count = next()
				if sl.den {
					c.DenSum, c.DenCount = next()
				}
				if sl.cuped {
					c.PreSum, c.PreCount = next()
				}
				uc[sl.metric] = c
			}
			b.Add(r.user, r.variant, fromMicros(r.first), r.crossover != 0, uc)
		}
	}
	if err := s.dedupedRead(ctx, read); err != nil {
		return results.Sample{}, use, fmt.Errorf("aggregate per-user values of %s: %w", experimentID, err)
	}
	sample := b.Sample()
	coverage := tallies.coverage(w)
	sample.Coverage = &coverage
	if slices.ContainsFunc(ms, results.ReadsScores) {
		o, err := s.orphans(ctx, orgID, w, ms)
		if err != nil {
			return results.Sample{}, use, err
		}
		sample.Orphans = &o
	}
	return sample, use, nil
}

// packedFloats is the SQL of the Array(Float64) arr as a String of its
// values' 8 bytes each, as the server holds them (little-endian on every
// platform ClickHouse builds for): reinterpretAsString drops a value's
// trailing zero bytes, so each is padded back to 8. clickhouse-go scans
// an array element by element through reflection (4 of the 5 s that
// scanning a run at 1 M users took, docs/scale.md); a string is one
// copy, which a packedCalls decodes.
func packedFloats(arr string) string {
	return fmt.Sprintf(`arrayStringConcat(arrayMap(x -> substring(concat(reinterpretAsString(x), '%s'), 1, 8), %s))`, strings.Repeat(`\0`, 8), arr)
}

// packedCalls scans a packedFloats column.
type packedCalls []float64

// UnmarshalBinary is how clickhouse-go hands it a String column.
func (p *packedCalls) UnmarshalBinary(b []byte) error {
	if len(b)%8 != 0 {
		return fmt.Errorf("packed calls of %d bytes, not a multiple of 8", len(b))
	}
	out := make([]float64, len(b)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	*p = out
	return nil
}

// coverageTallies adds up the users' coverage columns, by reason of
// results.CoverageReasons.
type coverageTallies []results.Tally

// add adds one user's columns: per reason, exposures << 32 | events
// (exposures included).
func (t coverageTallies) add(cols []uint64) {
	for r, v := range cols {
		if v == 0 {
			continue
		}
		all, exposures := int64(v&(1<<32-1)), int64(v>>32)
		t[r].Users++
		t[r].Exposures += exposures
		t[r].Events += all - exposures
	}
}

func (t coverageTallies) coverage(w results.Window) results.Coverage {
	byReason := map[string]results.Tally{}
	for r, reason := range results.CoverageReasons {
		byReason[reason] = t[r]
	}
	return results.NewCoverage(w, byReason)
}

// Coverage is results.Aggregator's Coverage: Aggregate's read without
// metrics, whose rows count it (a run's Aggregate counts it already).
func (s *Store) Coverage(ctx context.Context, orgID, experimentID string, w results.Window, arms []string) (results.Coverage, error) {
	sample, _, err := s.Aggregate(ctx, orgID, experimentID, w, arms, nil, time.Now(), nil)
	if err != nil {
		return results.Coverage{}, fmt.Errorf("count coverage: %w", err)
	}
	return *sample.Coverage, nil
}

// span is the time of a shard's first and last event of an experiment.
type span struct {
	events      uint64
	first, last int64
}

// experimentSpans gives each shard's span of the experiment's events:
// the coverage counts every one of them, in the window or not.
func (s *Store) experimentSpans(ctx context.Context, orgID, experimentID string) ([]span, error) {
	spans := make([]span, len(s.shards))
	err := s.onShards(ctx, func(ctx context.Context, i int, c driver.Conn) error {
		sp := &spans[i]
		return c.QueryRow(ctx, "SELECT count(), min(ts), max(ts) FROM "+s.t(eventsLocal)+" WHERE org_id = ? AND experiment_id = ?", orgID, experimentID).Scan(&sp.events, &sp.first, &sp.last)
	})
	if err != nil {
		return nil, fmt.Errorf("span events of %s: %w", experimentID, err)
	}
	return spans, nil
}

// eachShard runs sql(shard) on every shard at once and calls the emit of each
// row in the order of the rows' user (the first column of ORDER BY on
// every shard), merging the shards' streams. newRow gives a shard's
// scan destinations, its user and the function that takes a scanned row.
func (s *Store) eachShard(ctx context.Context, sql func(shard int) string, args []any, newRow func() (dest []any, user *string, emit func())) (err error) {
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
				if cerr := st.rows.Close(); cerr != nil && err == nil {
					err = cerr
				}
			}
		}
	}()
	// Opened side by side: Query returns with the first block, which a
	// shard sends only after the query's joins are built (25 s at 1 M
	// users), and the shards would do that one after the other.
	err = s.onShards(ctx, func(ctx context.Context, i int, c driver.Conn) error {
		rows, err := c.Query(ctx, sql(i), args...)
		if err != nil {
			return err
		}
		streams[i] = &stream{rows: rows}
		return nil
	})
	if err != nil {
		return err
	}
	for _, st := range streams {
		st.dest, st.user, st.emit = newRow()
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
