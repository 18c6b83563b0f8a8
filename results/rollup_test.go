package results_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/database"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/results"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/vocab"
)

// rollupMetrics covers every kind the per-user query computes, with CUPED
// (pre-period) and without, plus a quantile metric (read from events on
// both paths).
func rollupMetrics() []experiments.Metric {
	shared, off := false, false
	q := 0.9
	call := func(field string) *experiments.MetricSource {
		return &experiments.MetricSource{EventType: "model_call", Field: field}
	}
	biz := func(name string) *experiments.MetricSource {
		return &experiments.MetricSource{EventType: "business_event", BusinessMetric: name}
	}
	m := func(name, kind, method string, src *experiments.MetricSource) experiments.Metric {
		return experiments.Metric{Name: name, Kind: vocab.Kind(kind), Category: "secondary", MethodDefault: method, MetricVersion: 1, SharedOrgWide: &shared, Source: src}
	}
	out := []experiments.Metric{
		m("latency_ms", "mean", "welch_t", call("latency_ms")),
		m("conversion", "proportion", "z_test", biz("conversion")),
		m("revenue", "sum", "welch_t", biz("revenue")),
		m("calls", "count", "welch_t", call("latency_ms")),
		m("error_rate", "mean", "welch_t", call("error")),
		m("tokens_nonzero", "proportion", "z_test", call("total_tokens")),
		m("latency_rank", "mean", "mann_whitney", call("latency_ms")),
		m("cost_per_call", "ratio", "", call("cost_usd")),
		m("latency_p90", "quantile", "", call("latency_ms")),
		// Score metrics: a judge's grade (CUPED: calls of the pre-period
		// are scored too) and a human thumbs-up rate over any source.
		m("helpfulness", "mean", "welch_t", &experiments.MetricSource{EventType: vocab.TypeScore, Score: "helpfulness", ScoreSource: "judge"}),
		m("thumbs", "proportion", "welch_t", &experiments.MetricSource{EventType: vocab.TypeScore, Score: "thumbs_up"}),
	}
	out[2].CUPED = &off
	out[7].Denominator = call("")
	out[8].Quantile = &q
	return out
}

// rollupSim generates 30 days of traffic: users join every day (exposed
// at a random time, some again later, a few to the other arm, a few to an
// unknown variant), active users call the model and convert, some calls
// come before the exposure, another experiment's events give pre-period
// data, and each day brings late events (exposures too) for days already
// rolled up.
type rollupSim struct {
	rng     *rand.Rand
	org     string
	exp     string
	other   string
	day0    time.Time
	users   []simUser
	seq     int
	writer  *ingest.Writer
	clock   time.Time
	tenant  ingest.Tenant
	lateFor map[string]bool
	// scores waiting to be written with the next events; calls are the
	// calls made so far, which late scores grade.
	scores []scores.Row
	calls  []ingest.EventRow
}

type simUser struct {
	id      string
	variant string
	joined  time.Time
}

func (s *rollupSim) event(typ, user, variant string, ts time.Time) ingest.EventRow {
	s.seq++
	return ingest.EventRow{OrgID: s.org, EventID: fmt.Sprintf("ev-%d", s.seq), Type: vocab.RecordType(typ), ExperimentID: s.exp, UserID: user, Variant: variant, Ts: ts.UTC(), Source: "api"}
}

func (s *rollupSim) call(user simUser, ts time.Time) ingest.EventRow {
	e := s.event("model_call", user.id, user.variant, ts)
	if s.rng.IntN(10) > 0 { // some calls carry no latency
		l := 100 + s.rng.Float64()*400 + float64(len(user.variant))*7.3
		e.LatencyMs = &l
	}
	cost := s.rng.Float64() / 1000
	e.CostUSD = &cost
	tok := int64(s.rng.IntN(3) * 100)
	e.TotalTokens = &tok
	if s.rng.IntN(8) == 0 {
		msg := "timeout"
		e.Error = &msg
	}
	s.calls = append(s.calls, e)
	if s.rng.IntN(3) == 0 {
		s.score(e, "helpfulness", "judge", float64(1+s.rng.IntN(5)), e.Ts.Add(time.Second))
	}
	if s.rng.IntN(4) == 0 {
		s.score(e, "thumbs_up", "human", float64(s.rng.IntN(2)), e.Ts.Add(time.Minute))
	}
	return e
}

// score queues a score of call e.
func (s *rollupSim) score(e ingest.EventRow, name, source string, v float64, ts time.Time) {
	s.scores = append(s.scores, scores.Row{OrgID: s.org, CallID: e.EventID, Name: name, Source: source, Value: v, Ts: ts.UTC()})
}

func (s *rollupSim) business(user simUser, name string, v float64, ts time.Time) ingest.EventRow {
	e := s.event("business_event", user.id, user.variant, ts)
	e.BusinessMetric, e.Value = &name, &v
	return e
}

// at is a random instant of the day.
func (s *rollupSim) at(day time.Time) time.Time {
	return day.Add(time.Duration(s.rng.Int64N(int64(24*time.Hour))) / time.Millisecond * time.Millisecond)
}

// trafficOf is one day's events.
func (s *rollupSim) trafficOf(day time.Time) []ingest.EventRow {
	var out []ingest.EventRow
	for i := range 12 {
		u := simUser{id: fmt.Sprintf("u%d-%d", day.Day(), i), variant: resultstest.Arms[i%2], joined: day}
		if i == 11 && day.Day()%5 == 0 {
			u.variant = "nope" // outside the allocation
		}
		first := s.at(day)
		if s.rng.IntN(3) == 0 { // a call before the exposure: pre-period, not in the metric
			out = append(out, s.call(u, first.Add(-time.Duration(s.rng.IntN(60)+1)*time.Minute)))
		}
		if s.rng.IntN(4) == 0 { // another experiment's call: pre-period data of the org
			e := s.call(u, first.Add(-time.Hour))
			e.ExperimentID = s.other
			out = append(out, e)
		}
		out = append(out, s.event("exposure", u.id, u.variant, first))
		s.users = append(s.users, u)
	}
	for _, u := range s.users {
		if u.joined.After(day) || s.rng.IntN(3) == 0 {
			continue
		}
		for range s.rng.IntN(4) {
			out = append(out, s.call(u, s.at(day)))
		}
		switch s.rng.IntN(12) {
		case 0:
			out = append(out, s.business(u, "conversion", 1, s.at(day)), s.business(u, "revenue", math.Round(s.rng.Float64()*1e4)/100, s.at(day)))
		case 1:
			out = append(out, s.event("exposure", u.id, u.variant, s.at(day))) // exposed again
		case 2:
			if u.variant != "nope" && s.rng.IntN(4) == 0 { // crossover
				out = append(out, s.event("exposure", u.id, resultstest.Arms[(u.joined.Day()+1)%2], s.at(day)))
			}
		}
	}
	return out
}

// lateOf is events for earlier days, received today: calls, revenue,
// pre-period data of users exposed since, and an exposure of a new user a
// few days back.
func (s *rollupSim) lateOf(today time.Time) []ingest.EventRow {
	var out []ingest.EventRow
	for k := 1; k <= 3; k++ {
		day := today.AddDate(0, 0, -k)
		if day.Before(s.day0) || s.rng.IntN(2) == 0 {
			continue
		}
		s.lateFor[day.Format("2006-01-02")] = true
		for _, u := range s.users {
			if !u.joined.After(day) && s.rng.IntN(10) == 0 {
				out = append(out, s.call(u, s.at(day)), s.business(u, "revenue", 1.1, s.at(day)))
			}
		}
		// Pre-period data arriving late: another experiment's call of a
		// user first exposed on a later day, whose rollup holds it.
		for _, u := range s.users {
			if u.joined.After(day) && !u.joined.After(day.AddDate(0, 0, results.PrePeriodDays)) && s.rng.IntN(6) == 0 {
				e := s.call(u, s.at(day))
				e.ExperimentID = s.other
				out = append(out, e)
			}
		}
		// Scores arriving today for calls of that day: new ones, a judge
		// run again (replacing its grade), a second source of thumbs.
		for _, c := range s.calls {
			if c.Ts.Truncate(24*time.Hour).Equal(day) && s.rng.IntN(8) == 0 {
				s.score(c, "helpfulness", "judge", float64(1+s.rng.IntN(5)), today.Add(time.Duration(s.rng.IntN(3600))*time.Second))
				s.score(c, "thumbs_up", "code", 1, today.Add(time.Hour))
			}
		}
		u := simUser{id: fmt.Sprintf("late-%d-%d", today.Day(), k), variant: resultstest.Arms[k%2], joined: day}
		s.users = append(s.users, u)
		first := s.at(day)
		out = append(out, s.event("exposure", u.id, u.variant, first), s.call(u, first.Add(time.Second)))
	}
	return out
}

func (s *rollupSim) write(t *testing.T, events []ingest.EventRow, received time.Time) {
	t.Helper()
	s.clock = received
	for start := 0; start < len(events); start += 300 {
		b := ingest.Batch{Tenant: s.tenant, Rows: events[start:min(start+300, len(events))]}
		o, err := s.writer.Write(t.Context(), b)
		if err != nil || o.Accepted != len(b.Rows) {
			t.Fatalf("write: %+v %v", o, err)
		}
	}
	for start := 0; start < len(s.scores); start += 300 {
		b := ingest.Batch{Tenant: s.tenant, Scores: s.scores[start:min(start+300, len(s.scores))]}
		if o, err := s.writer.Write(t.Context(), b); err != nil || o.Accepted == 0 {
			t.Fatalf("write scores: %+v %v", o, err)
		}
	}
	s.scores = nil
}

// TestIncrementalEqualsFullOver30Days runs, every simulated night, the
// nightly run of the day that ended both ways, and every afternoon a
// manual run (open day), and requires the same per-user values and the
// same analysis, bit for bit, while late events keep arriving for days
// already rolled up.
func TestIncrementalEqualsFullOver30Days(t *testing.T) {
	env := testenv.New(t)
	db := env.DB
	org := env.NewOrg(t)
	cfg := resultstest.Config("rollups")
	cfg.Metrics = rollupMetrics()
	exp := resultstest.Experiment(t, db, org.ID, cfg)
	other := resultstest.Experiment(t, db, org.ID, resultstest.Config("other"))
	day0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	// The experiment starts in the morning of day 0.
	resultstest.Backdate(t, db, exp.ID, exp.CreatedAt.Sub(day0.Add(10*time.Hour+17*time.Minute)))
	sim := &rollupSim{rng: rand.New(rand.NewPCG(17, 3)), org: org.ID, exp: exp.ID, other: other.ID, day0: day0,
		tenant: ingest.Tenant{OrgID: org.ID, Plan: plans.Enterprise}, lateFor: map[string]bool{}}
	sim.writer = ingest.NewWriter(db, ingest.Options{Now: func() time.Time { return sim.clock }})
	// This traffic has about two events per user and day, fewer than the
	// rollup rows they make: read rollups all the same (checked below).
	results.RollupMaxRowsPerEvent = math.Inf(1)
	defer func() { results.RollupMaxRowsPerEvent = 1 }()

	var rerolled, reused, fullFallbacks int
	for d := 0; d <= 30; d++ {
		day := day0.AddDate(0, 0, d)
		if d > 0 {
			// 00:30: the nightly run of the day that ended.
			use := compareRuns(t, db, org.ID, exp.ID, results.NightlyKey(day.AddDate(0, 0, -1)), day.Add(30*time.Minute))
			if use.Full != "" {
				t.Fatalf("nightly %s read the whole window: %s", day.AddDate(0, 0, -1).Format("2006-01-02"), use.Full)
			}
			if use.Rolled > 1 {
				rerolled += use.Rolled - 1
			}
			reused += use.Reused
		}
		sim.write(t, sim.trafficOf(day), day.Add(23*time.Hour))
		if d > 0 {
			sim.write(t, sim.lateOf(day), day.Add(23*time.Hour+30*time.Minute))
		}
		if d%3 == 1 {
			// 23:45: a manual run reads rollups plus the open day.
			at := day.Add(23*time.Hour + 45*time.Minute)
			if use := compareRuns(t, db, org.ID, exp.ID, results.ManualKey(at), at); use.Full != "" {
				fullFallbacks++
			} else if use.OpenDay != day.Format("2006-01-02") {
				t.Errorf("manual run at %s: open day %q", at, use.OpenDay)
			}
		}
	}
	if rerolled == 0 || reused < 300 {
		t.Errorf("late days rolled up again: %d, days reused: %d; the test exercised neither", rerolled, reused)
	}
	t.Logf("late days rolled up again: %d, days reused: %d, manual runs read in full: %d", rerolled, reused, fullFallbacks)

	// The score metrics had values, from scored calls only.
	last := day0.AddDate(0, 0, 31)
	full, _ := runBoth(t, db, org.ID, exp.ID, results.NightlyKey(day0.AddDate(0, 0, 29)), last)
	for mi := len(cfg.Metrics) - 2; mi < len(cfg.Metrics); mi++ {
		arm := full.Arms["control"]
		var scored, valued int
		for u := range arm.UserIDs {
			if arm.Scored[mi][u] > 0 {
				scored++
			}
			if !math.IsNaN(arm.Values[mi][u]) {
				valued++
			}
		}
		if scored < 50 || scored != valued {
			t.Errorf("%s: %d users with scored calls, %d with a value; want the same, and many", cfg.Metrics[mi].Name, scored, valued)
		}
	}

	// A score alone, received today for a call of a day rolled up long
	// ago, raises that day's mark (its rollup is stale), and the runs
	// still agree.
	old := sim.calls[len(sim.calls)/3]
	markOf := func() int64 {
		var v int64
		db.Table("event_day_marks").Where("org_id = ? AND day = ?", org.ID, old.Ts.Format("2006-01-02")).Select("COALESCE(MAX(version), 0)").Scan(&v)
		return v
	}
	markBefore := markOf()
	sim.score(old, "helpfulness", "judge", 17, last)
	sim.write(t, nil, last)
	if markAfter := markOf(); markAfter != markBefore+1 {
		t.Errorf("late score for a call of %s: day mark %d -> %d, want +1", old.Ts.Format("2006-01-02"), markBefore, markAfter)
	}
	compareRuns(t, db, org.ID, exp.ID, results.NightlyKey(day0.AddDate(0, 0, 30)), last.Add(time.Minute))

	// Without its late-event mark a rolled-up day is stale, and the
	// comparison sees it: the mark is what keeps the two equal.
	sim.write(t, sim.lateOf(last), last.Add(time.Hour))
	var marks []map[string]any
	if err := db.Table("event_day_marks").Find(&marks).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("DELETE FROM event_day_marks").Error; err != nil {
		t.Fatal(err)
	}
	key := results.NightlyKey(day0.AddDate(0, 0, 30))
	if full, inc := runBoth(t, db, org.ID, exp.ID, key, last.Add(2*time.Hour)); sameSample(full, inc) == "" {
		t.Fatal("incremental equals full with the late events' marks removed: the test cannot see stale rollups")
	}
	if err := db.Table("event_day_marks").Create(marks).Error; err != nil {
		t.Fatal(err)
	}
	compareRuns(t, db, org.ID, exp.ID, key, last.Add(3*time.Hour))

	// At the default density threshold these sparse rollups are not read.
	results.RollupMaxRowsPerEvent = 1
	if use := compareRuns(t, db, org.ID, exp.ID, key, last.Add(4*time.Hour)); !strings.Contains(use.Full, "not smaller than the events") {
		t.Errorf("sparse rollups read at the default threshold: %+v", use)
	}

	// An experiment without metrics (the SRM check only): the open day's
	// rows are its exposures alone, and must still unite with the stored
	// days' (a PostgreSQL type error once).
	manual := results.ManualKey(last.Add(5 * time.Hour))
	pd, err := results.LoadDesign(t.Context(), db, org.ID, exp.ID, manual.WindowEnd)
	if err != nil {
		t.Fatal(err)
	}
	results.RollupMaxRowsPerEvent = math.Inf(1)
	// The whole experiment (the plan's retention would cut the window
	// within a day, which reads events).
	w := results.NewWindow(day0.Add(10*time.Hour+17*time.Minute), manual.WindowEnd, 730)
	bare, err := results.Aggregate(t.Context(), db, org.ID, exp.ID, w, pd.Design.Arms(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	inc, use, err := results.AggregateIncremental(t.Context(), db, org.ID, exp.ID, w, pd.Design.Arms(), nil, last.Add(5*time.Hour), nil)
	if err != nil || use.Full != "" || use.OpenDay == "" {
		t.Fatalf("incremental without metrics: %+v %v", use, err)
	}
	if diff := sameSample(bare, inc); diff != "" {
		t.Fatalf("without metrics: %s", diff)
	}

	// Retention: the last batch of the nightly purge takes the rollups of
	// the days before the cutoff with it, and only those.
	cutoff := day0.AddDate(0, 0, 10)
	for {
		n, err := results.PurgeNightly(t.Context(), db, org.ID, cutoff, 100)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	var before, after int64
	db.Table("result_rollups").Where("experiment_id = ? AND day < ?", exp.ID, "2026-03-11").Count(&before)
	db.Table("result_rollups").Where("experiment_id = ? AND day >= ?", exp.ID, "2026-03-11").Count(&after)
	if before != 0 || after == 0 {
		t.Errorf("after the purge: %d rollup rows before the cutoff (want 0), %d after (want some)", before, after)
	}
}

// runBoth aggregates the run of key both ways at `now`.
func runBoth(t *testing.T, db *gorm.DB, orgID, expID string, key results.Key, now time.Time) (results.Sample, results.Sample) {
	t.Helper()
	p, err := results.LoadDesign(t.Context(), db, orgID, expID, key.WindowEnd)
	if err != nil || p.Skip != "" {
		t.Fatalf("design of %s: %v %s", key.ComputedFor, err, p.Skip)
	}
	d := p.Design
	full, err := results.Aggregate(t.Context(), db, orgID, expID, d.Window, d.Arms(), d.Metrics, nil)
	if err != nil {
		t.Fatalf("full %s: %v", key.ComputedFor, err)
	}
	inc, _, err := results.AggregateIncremental(t.Context(), db, orgID, expID, d.Window, d.Arms(), d.Metrics, now, nil)
	if err != nil {
		t.Fatalf("incremental %s: %v", key.ComputedFor, err)
	}
	return full, inc
}

// compareRuns requires the run of key to give the same sample and the
// same analysis both ways.
func compareRuns(t *testing.T, db *gorm.DB, orgID, expID string, key results.Key, now time.Time) results.RollupUse {
	t.Helper()
	p, err := results.LoadDesign(t.Context(), db, orgID, expID, key.WindowEnd)
	if err != nil || p.Skip != "" {
		t.Fatalf("design of %s: %v %s", key.ComputedFor, err, p.Skip)
	}
	d := p.Design
	if database.IsPostgres(db) {
		// A fresh test schema has no statistics: plan as autovacuum would.
		if err := db.Exec("ANALYZE").Error; err != nil {
			t.Fatal(err)
		}
	}
	full, err := results.Aggregate(t.Context(), db, orgID, expID, d.Window, d.Arms(), d.Metrics, nil)
	if err != nil {
		t.Fatalf("full %s: %v", key.ComputedFor, err)
	}
	inc, use, err := results.AggregateIncremental(t.Context(), db, orgID, expID, d.Window, d.Arms(), d.Metrics, now, nil)
	if err != nil {
		t.Fatalf("incremental %s: %v", key.ComputedFor, err)
	}
	if diff := sameSample(full, inc); diff != "" {
		t.Fatalf("%s (%+v): incremental differs from full: %s", key.ComputedFor, use, diff)
	}
	if len(full.Arms["control"].UserIDs) == 0 {
		t.Fatalf("%s: no users", key.ComputedFor)
	}
	af, err := results.Analyze(d, full, now, nil)
	if err != nil {
		t.Fatal(err)
	}
	ai, err := results.Analyze(d, inc, now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(af, ai) {
		t.Fatalf("%s: analyses differ", key.ComputedFor)
	}
	return use
}

// sameSample describes the first difference between two samples, bit for
// bit ("" when equal).
func sameSample(a, b results.Sample) string {
	if a.Unattributed != b.Unattributed || len(a.Arms) != len(b.Arms) {
		return fmt.Sprintf("unattributed %d vs %d, arms %d vs %d", a.Unattributed, b.Unattributed, len(a.Arms), len(b.Arms))
	}
	for name, x := range a.Arms {
		y := b.Arms[name]
		if y == nil || x.Crossover != y.Crossover || !reflect.DeepEqual(x.UserIDs, y.UserIDs) {
			return fmt.Sprintf("arm %s: users or crossover differ", name)
		}
		if len(x.First) != len(x.UserIDs) || !slices.EqualFunc(x.First, y.First, time.Time.Equal) || !slices.EqualFunc(x.CrossoverFirst, y.CrossoverFirst, time.Time.Equal) {
			return fmt.Sprintf("arm %s: first exposures differ (or are missing)", name)
		}
		for _, pair := range [][2][][]float64{{x.Values, y.Values}, {x.Pre, y.Pre}, {x.Den, y.Den}} {
			if diff := sameBits(pair[0], pair[1]); diff != "" {
				return "arm " + name + ": " + diff
			}
		}
		if !reflect.DeepEqual(x.Scored, y.Scored) {
			return "arm " + name + ": scored calls differ"
		}
		for m := range x.Calls {
			if !reflect.DeepEqual(x.Calls[m], y.Calls[m]) {
				return fmt.Sprintf("arm %s: calls of metric %d differ", name, m)
			}
		}
	}
	return ""
}

func sameBits(a, b [][]float64) string {
	if len(a) != len(b) {
		return "metric count differs"
	}
	for m := range a {
		if len(a[m]) != len(b[m]) {
			return fmt.Sprintf("metric %d: %d vs %d values", m, len(a[m]), len(b[m]))
		}
		for u := range a[m] {
			if math.Float64bits(a[m][u]) != math.Float64bits(b[m][u]) {
				return fmt.Sprintf("metric %d user %d: %v vs %v", m, u, a[m][u], b[m][u])
			}
		}
	}
	return ""
}
