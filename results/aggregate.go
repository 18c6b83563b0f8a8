package results

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/vocab"
)

// Arm holds the exposed users of one arm and their per-user value of each
// metric: Values[m][u] is user u's value of metric m, NaN when a mean
// metric has no value for the user (for a ratio metric: the numerator).
// A metric that could not be resolved, and a quantile metric, has no
// values. Crossover users (exposed to more than one variant) are counted
// in Crossover under their first arm and left out of everything else.
type Arm struct {
	UserIDs []string
	Values  [][]float64
	// Pre[m][u] is user u's pre-period value of a CUPED metric m (0 without
	// pre-period data); Den[m][u] the denominator of a ratio metric m, or
	// the user's model calls for a score metric m (DenominatorOf).
	Pre, Den [][]float64
	// Scored[m][u] is the number of user u's model calls with a score of
	// score metric m (the calls its value averages).
	Scored [][]int64
	// Calls[m] are the per-call values of a quantile metric m, by user,
	// each user's in ascending order (sortLastUser).
	Calls []stats.Calls
	// First[u] is user u's first exposure in the window: it places the
	// user in a phase (the weights their assignment followed, for the
	// sample-ratio check and the stratified effect). CrossoverFirst holds
	// the crossover users' (the sample-ratio check counts them).
	First          []time.Time
	CrossoverFirst []time.Time
	Crossover      int64
}

// Exposed is the arm's exposed users by first exposure, crossover users
// included: what the sample-ratio check counts.
func (a *Arm) Exposed() int64 { return int64(len(a.UserIDs)) + a.Crossover }

// Sample is the aggregation of a run: the arms by variant name. Users
// whose first exposure names a variant outside the allocation are counted
// in Unattributed and left out.
type Sample struct {
	Arms         map[string]*Arm
	Unattributed int64
	// Coverage is set when the aggregation counted it in the same read:
	// the SQL engine when it read the experiment's events one by one (for
	// quantile metrics), ClickHouse always; otherwise CountCoverage (the
	// Aggregator's Coverage) gives it.
	Coverage *Coverage
	// Orphans counts, when ms has score metrics, the scores they read
	// whose call never arrived (orphans.go).
	Orphans *Orphans
}

// AggregateSQL returns the run's aggregation statement and its arguments,
// for EXPLAIN and for timing the bare query (bench/results).
func AggregateSQL(db *gorm.DB, orgID, experimentID string, w Window, ms []metrics.Resolved) (string, []any, error) {
	q, err := buildAggregateQuery(db, orgID, experimentID, w, ms, nil)
	return q.SQL, q.Args, err
}

// progressEvery is how many users are read between progress reports.
const progressEvery = 50_000

// Aggregate runs the run's single GROUP BY query over the window's events
// and collects the per-user values of ms by arm. arms lists the
// allocation's variants. progress, if set, is called as rows arrive
// (activities heartbeat from it).
func Aggregate(ctx context.Context, db *gorm.DB, orgID, experimentID string, w Window, arms []string, ms []metrics.Resolved, progress func(users int)) (Sample, error) {
	q, err := buildAggregateQuery(db, orgID, experimentID, w, ms, nil)
	if err != nil {
		return Sample{}, err
	}
	return collect(ctx, db, q, orgID, experimentID, w, arms, ms, progress)
}

// AggregateIncremental is Aggregate reading the window's ended days from
// their rollups, rolling up at `now` the days that have none or a stale one
// (rollup.go), and only the day the window ends in from events. The
// Sample is the same as Aggregate's, bit for bit; windows it cannot split
// into days fall back to Aggregate's query (RollupUse.Full says why), and
// quantile metrics always read events (eventpass.go).
func AggregateIncremental(ctx context.Context, db *gorm.DB, orgID, experimentID string, w Window, arms []string, ms []metrics.Resolved, now time.Time, progress func(users int)) (Sample, RollupUse, error) {
	var p *rollupPlan
	use := RollupUse{Full: "the users' events of every experiment are read (a holdout's run)"}
	if !w.AllExperiments {
		// Rollups are per experiment: a holdout's run reads events.
		var err error
		if p, use, err = planRollups(ctx, db, orgID, experimentID, w, ms, now); err != nil {
			return Sample{}, use, err
		}
	}
	q, err := buildAggregateQuery(db, orgID, experimentID, w, ms, p)
	if err != nil {
		return Sample{}, use, err
	}
	s, err := collect(ctx, db, q, orgID, experimentID, w, arms, ms, progress)
	return s, use, err
}

// Aggregator is everything a run, the health check, the traffic route and
// the dashboard read from events: the seam of a second analytics engine
// (docs/scale.md, "Past one machine"), beside the events store it reads
// (ingest.EventStore). SQL, over expd's own database, implements it; any
// implementation must pass the conformance suite of results/enginetest.
type Aggregator interface {
	// Aggregate reads a run's per-user values of ms by arm (sums and
	// counts reduced by each metric's kind, ratio denominators, CUPED
	// pre-period values) and the per-call values of its quantile
	// metrics, as of now (Sample). Score metrics read each model call's
	// stored scores (the events store's, EventStore.UpsertScores) with
	// the rules of docs/quality.md ("Score metrics"): values over scored
	// calls, Den the user's calls, Scored their scored calls, and
	// Sample.Orphans. progress, if set, is called as users are read.
	Aggregate(ctx context.Context, orgID, experimentID string, w Window, arms []string, ms []metrics.Resolved, now time.Time, progress func(users int)) (Sample, RollupUse, error)
	// Coverage sorts every event of the experiment into counted or one
	// left-out reason, by Aggregate's rules (CountCoverage).
	Coverage(ctx context.Context, orgID, experimentID string, w Window, arms []string) (Coverage, error)
	// Traffic counts unique exposed users per UTC day and variant, every
	// day from from's date through to's present (ingest.Traffic).
	Traffic(ctx context.Context, orgID, experimentID string, from, to time.Time, variants []string) ([]ingest.TrafficDay, error)
	// ExposedUsers counts the org's distinct exposed users, over all its
	// experiments, with an exposure in [from, to) (ingest.ExposedUsers):
	// the org's recent traffic a power computation and N* start from.
	ExposedUsers(ctx context.Context, orgID string, from, to time.Time) (int64, error)
}

// SQL aggregates in expd's database (PostgreSQL or SQLite).
type SQL struct{ DB *gorm.DB }

var _ Aggregator = SQL{}

// Aggregate is AggregateIncremental on s.DB.
func (s SQL) Aggregate(ctx context.Context, orgID, experimentID string, w Window, arms []string, ms []metrics.Resolved, now time.Time, progress func(users int)) (Sample, RollupUse, error) {
	return AggregateIncremental(ctx, s.DB, orgID, experimentID, w, arms, ms, now, progress)
}

// Coverage is CountCoverage on s.DB.
func (s SQL) Coverage(ctx context.Context, orgID, experimentID string, w Window, arms []string) (Coverage, error) {
	return CountCoverage(ctx, s.DB, orgID, experimentID, w, arms)
}

// Traffic is ingest.Traffic on s.DB.
func (s SQL) Traffic(ctx context.Context, orgID, experimentID string, from, to time.Time, variants []string) ([]ingest.TrafficDay, error) {
	return ingest.Traffic(ctx, s.DB, orgID, experimentID, from, to, variants)
}

// ExposedUsers is ingest.ExposedUsers on s.DB.
func (s SQL) ExposedUsers(ctx context.Context, orgID string, from, to time.Time) (int64, error) {
	return ingest.ExposedUsers(ctx, s.DB, orgID, from, to)
}

// collect reads the per-user rows of q into a Sample, then, for quantile
// metrics, the experiment's events with their calls and coverage.
func collect(ctx context.Context, db *gorm.DB, q aggregateQuery, orgID, experimentID string, w Window, arms []string, ms []metrics.Resolved, progress func(users int)) (Sample, error) {
	b := NewSampleBuilder(arms, ms, progress)
	rows, err := db.WithContext(ctx).Raw(q.SQL, q.Args...).Rows()
	if err != nil {
		return Sample{}, fmt.Errorf("aggregate per-user values: %w", err)
	}
	defer rows.Close()
	var user, variant string
	var first instant
	var crossover int64
	sums := make([]perUserColumns, len(ms))
	dest := []any{&user, &variant, &first, &crossover}
	for _, i := range b.computed {
		c := &sums[i]
		dest = append(dest, &c.sum, &c.count)
		if DenominatorOf(ms[i]) != nil {
			dest = append(dest, &c.denSum, &c.denCount)
		}
		if ms[i].UsesCUPED() {
			dest = append(dest, &c.preSum, &c.preCount)
		}
	}
	cols := make([]UserColumns, len(ms))
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return Sample{}, fmt.Errorf("scan per-user values: %w", err)
		}
		for _, i := range b.computed {
			c := sums[i]
			cols[i] = UserColumns{Sum: c.sum.Float64, Count: c.count, DenSum: c.denSum.Float64, DenCount: c.denCount, PreSum: c.preSum.Float64, PreCount: c.preCount}
		}
		b.Add(user, variant, first.t, crossover != 0, cols)
	}
	if err := rows.Err(); err != nil {
		return Sample{}, fmt.Errorf("read per-user values: %w", err)
	}
	s := b.Sample()
	if slices.ContainsFunc(ms, ReadsCalls) {
		c, err := readEvents(ctx, db, orgID, experimentID, w, arms, ms, &s)
		if err != nil {
			return Sample{}, err
		}
		s.Coverage = &c
	}
	if slices.ContainsFunc(ms, ReadsScores) {
		o, err := countOrphans(ctx, db, orgID, w, ms)
		if err != nil {
			return Sample{}, err
		}
		s.Orphans = &o
	}
	return s, nil
}

// UserColumns are one metric's numbers of a user's row: the sum and
// count of its matching values, of its denominator's (DenominatorOf) and
// of its CUPED pre-period's. An engine computes them per user; a
// SampleBuilder turns them into the metric's per-user value. For a
// metric read call by call (ReadsCalls), an engine that reads the calls
// with the rest of the row gives them instead, in any order (the builder
// sorts them: sortLastUser).
type UserColumns struct {
	Sum, DenSum, PreSum       float64
	Count, DenCount, PreCount int64
	Calls                     []float64
}

// SampleBuilder collects an engine's per-user rows into a Sample, by the
// rules every engine shares: a user whose first exposure names a
// variant outside arms is unattributed, a crossover user is counted
// under their first arm and left out of the rest.
type SampleBuilder struct {
	s        Sample
	ms       []metrics.Resolved
	computed []int        // metrics with per-user columns, in column order
	rules    []columnRule // by metric: how its columns become values
	calls    []int        // metrics read call by call
	n        int
	closed   bool // the calls' last offsets are appended
	progress func(users int)
}

// NewSampleBuilder starts the Sample of a run of ms over arms; progress,
// if set, is called as users are added.
func NewSampleBuilder(arms []string, ms []metrics.Resolved, progress func(users int)) *SampleBuilder {
	b := &SampleBuilder{s: Sample{Arms: make(map[string]*Arm, len(arms))}, ms: ms, rules: make([]columnRule, len(ms)), progress: progress}
	for _, v := range arms {
		b.s.Arms[v] = &Arm{Values: make([][]float64, len(ms)), Pre: make([][]float64, len(ms)),
			Den: make([][]float64, len(ms)), Scored: make([][]int64, len(ms)), Calls: make([]stats.Calls, len(ms))}
	}
	for i, m := range ms {
		if HasUserColumns(m) {
			b.computed = append(b.computed, i)
			b.rules[i] = newColumnRule(m)
		}
		if ReadsCalls(m) {
			b.calls = append(b.calls, i)
		}
	}
	return b
}

// Add adds one user's row: first is their first exposure in the window;
// cols[i] are metric i's columns (read for the metrics with per-user
// columns: HasUserColumns).
func (b *SampleBuilder) Add(user, variant string, first time.Time, crossover bool, cols []UserColumns) {
	arm, ok := b.s.Arms[variant]
	if !ok {
		b.s.Unattributed++
		return
	}
	if crossover {
		arm.Crossover++
		arm.CrossoverFirst = append(arm.CrossoverFirst, first)
		return
	}
	arm.UserIDs = append(arm.UserIDs, user)
	arm.First = append(arm.First, first)
	for _, i := range b.computed {
		cols[i].appendTo(arm, i, b.rules[i])
	}
	for _, i := range b.calls {
		// A user without calls has no offset, as in the event walk.
		if c := &arm.Calls[i]; len(cols[i].Calls) > 0 {
			c.Offsets = append(c.Offsets, len(c.Values))
			c.Values = append(c.Values, cols[i].Calls...)
			sortLastUser(c)
		}
	}
	if b.n++; b.progress != nil && b.n%progressEvery == 0 {
		b.progress(b.n)
	}
}

// Sample is what the builder collected.
func (b *SampleBuilder) Sample() Sample {
	if !b.closed {
		b.closed = true
		closeCalls(b.s.Arms, b.calls)
	}
	return b.s
}

// sortLastUser sorts the calls of c's last user by value. A user's calls
// are kept in ascending order, whatever order an engine reads them in, so
// every engine gives the same arrays; the statistics over them do not
// depend on their order (stats.CompareQuantile, stats.Distributions), and
// an engine need not sort them by time (ClickHouse: docs/scale.md).
func sortLastUser(c *stats.Calls) {
	slices.Sort(c.Values[c.Offsets[len(c.Offsets)-1]:])
}

// closeCalls appends the closing offset of every arm's calls of the
// metrics ms[i], i in calls, that have any.
func closeCalls(arms map[string]*Arm, calls []int) {
	for _, arm := range arms {
		for _, i := range calls {
			if c := &arm.Calls[i]; len(c.Offsets) > 0 {
				c.Offsets = append(c.Offsets, len(c.Values))
			}
		}
	}
}

// HasUserColumns tells whether m gets per-user columns (UserColumns) in
// a run's query: resolved, and not read call by call.
func HasUserColumns(m metrics.Resolved) bool { return m.Problem == "" && !m.Kind.Spec().PerCall }

// ReadsCalls tells whether m is resolved and read call by call
// (eventpass.go).
func ReadsCalls(m metrics.Resolved) bool { return m.Problem == "" && m.Kind.Spec().PerCall }

// instant scans a timestamp column: PostgreSQL's arrive as time.Time,
// SQLite's as time.Time when the driver knows the column's declared type
// and as text when an expression hides it.
type instant struct{ t time.Time }

// sqliteLayouts are the text forms SQLite timestamps are stored in (the
// driver's _time_format=sqlite, and RFC 3339).
var sqliteLayouts = []string{"2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999Z07:00", time.RFC3339Nano, "2006-01-02 15:04:05.999999999"}

func (i *instant) Scan(v any) error {
	switch x := v.(type) {
	case time.Time:
		i.t = x.UTC()
		return nil
	case []byte:
		return i.parse(string(x))
	case string:
		return i.parse(x)
	case nil:
		i.t = time.Time{}
		return nil
	}
	return fmt.Errorf("scan instant: unsupported %T", v)
}

func (i *instant) parse(s string) error {
	for _, l := range sqliteLayouts {
		if t, err := time.Parse(l, s); err == nil {
			i.t = t.UTC()
			return nil
		}
	}
	return fmt.Errorf("scan instant: unknown timestamp form %q", s)
}

// perUserColumns are one metric's columns of a user's row as the SQL
// engine scans them (exact sums).
type perUserColumns struct {
	sum, denSum, preSum       exactSum
	count, denCount, preCount int64
}

// ReadsScores tells whether m is resolved and reads scores.
func ReadsScores(m metrics.Resolved) bool {
	return m.Problem == "" && m.Source != nil && m.Source.EventType == vocab.TypeScore
}

// columnRule is how a metric's UserColumns become its per-user values.
// It is worked out once per run: looking the kinds up for every user
// and metric took a tenth of a run's CPU at 1 M users (docs/scale.md).
type columnRule struct {
	reduce    vocab.Reduce // the value's, and the pre-period's
	den       bool         // a denominator is read (DenominatorOf)
	denReduce vocab.Reduce
	scored    bool // a score metric: its scored calls are kept
	cuped     bool
}

func newColumnRule(m metrics.Resolved) columnRule {
	t := m.Source.EventType
	r := columnRule{reduce: m.Kind.AggregatedAs().Spec().ForSource(t).Reduce, scored: t == vocab.TypeScore, cuped: m.UsesCUPED()}
	if den := DenominatorOf(m); den != nil {
		r.den, r.denReduce = true, DenominatorKind(*den).Spec().ForSource(den.EventType).Reduce
	}
	return r
}

// appendTo adds the user's value of metric i (and its denominator or
// pre-period value) to the arm.
func (c UserColumns) appendTo(arm *Arm, i int, r columnRule) {
	if r.den {
		d, _ := r.denReduce.PerUser(c.DenSum, c.DenCount)
		arm.Den[i] = append(arm.Den[i], d)
	}
	if r.scored {
		arm.Scored[i] = append(arm.Scored[i], c.Count)
	}
	v, ok := r.reduce.PerUser(c.Sum, c.Count)
	if !ok {
		v = math.NaN()
	}
	arm.Values[i] = append(arm.Values[i], v)
	if r.cuped {
		// No pre-period data: x = 0 (docs/results.md).
		x, ok := r.reduce.PerUser(c.PreSum, c.PreCount)
		if !ok {
			x = 0
		}
		arm.Pre[i] = append(arm.Pre[i], x)
	}
}
