// Package enginetest is the conformance suite of an analytics engine: an
// events store (ingest.EventStore) and an aggregator (results.Aggregator)
// over the same events. Every implementation must pass it: the SQL engine
// runs it on SQLite and on PostgreSQL (results/engine_test.go), a second
// engine (docs/scale.md, "Past one machine") runs it on its own store.
//
// The expected numbers are computed in Go from the synthetic users
// (resultstest), not from another engine, so two engines that pass agree
// with each other: the same per-user sums and counts (values, CUPED
// pre-period values, ratio denominators), the same quantile calls, the
// same crossover and unattributed counts, coverage and traffic, and
// result rows within Tolerance (relative) of the rows analysed from the
// expected sample.
package enginetest

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/results"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/vocab"
)

// Engine is one implementation under test.
type Engine struct {
	Events     ingest.EventStore
	Aggregator results.Aggregator
	// Race, where the engine's store can hold them, stores a copy of
	// each row beside the stored one, as writes racing past the dedup
	// do; the reads after it must see each event once.
	Race func(t *testing.T, rows []ingest.EventRow)
}

// Tolerance is the relative difference allowed between an engine's
// numbers and the expected ones (float sums in another order).
const Tolerance = 1e-9

// perArm is the synthetic users per arm; every third has a pre-period
// model call (CUPED's covariate).
const perArm = 20

// Run runs the suite against the engine newEngine returns. db is the
// control plane (orgs, experiments: PostgreSQL or SQLite) the engine
// works beside; each Run makes its own org.
func Run(t *testing.T, db *gorm.DB, newEngine func(t *testing.T) Engine) {
	e := newEngine(t)
	ctx := t.Context()
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	cfg := config(t)
	exp := resultstest.Experiment(t, db, org.ID, cfg)
	at := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	f := newFixture(org.ID, exp.ID, at)
	w := results.NewWindow(at.Add(-time.Hour), at.Add(time.Hour), 30)
	ms, err := metrics.Resolve(ctx, metrics.Store{DB: db}, org.ID, cfg.Metrics)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Problem != "" {
			t.Fatalf("metric %s does not resolve: %s", m.Name, m.Problem)
		}
	}
	arms := resultstest.Arms

	t.Run("insert dedups by event id", func(t *testing.T) {
		n, err := e.Events.Insert(ctx, f.events)
		if err != nil || n != len(f.events) {
			t.Fatalf("Insert = %d, %v; want %d", n, err, len(f.events))
		}
		again := append(slices.Clone(f.events[:10]), f.events[0])
		if n, err := e.Events.Insert(ctx, again); err != nil || n != 0 {
			t.Fatalf("Insert of stored ids = %d, %v; want 0", n, err)
		}
		read, err := e.Events.Read(ctx, ingest.ReadFilter{OrgID: org.ID, ExperimentID: exp.ID, Limit: len(f.events) + 10})
		if err != nil || len(read) != len(f.events) {
			t.Fatalf("Read = %d events, %v; want %d", len(read), err, len(f.events))
		}
		if !slices.IsSortedFunc(read, func(a, b ingest.EventRow) int { return b.Ts.Compare(a.Ts) }) {
			t.Error("Read is not newest first")
		}
		checkReadCalls(t, e.Events, f, org.ID, exp.ID)
		checkReadNewCalls(t, e.Events, f, org.ID, exp.ID)
		u := f.users[0]
		mine, err := e.Events.ReadUser(ctx, org.ID, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		var lat []float64
		for _, ev := range mine {
			if ev.Type == vocab.TypeModelCall {
				lat = append(lat, *ev.LatencyMs)
			}
		}
		if len(mine) == 0 || mine[0].Type != vocab.TypeExposure || !slices.Equal(lat, u.Latencies) {
			t.Errorf("ReadUser: %d events, latencies %v; want the exposure first and %v", len(mine), lat, u.Latencies)
		}
	})

	if e.Race != nil {
		e.Race(t, f.events)
	}

	var sample results.Sample
	t.Run("per-user values, calls and result rows", func(t *testing.T) {
		var err error
		sample, _, err = e.Aggregator.Aggregate(ctx, org.ID, exp.ID, w, arms, ms, time.Now(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if sample.Unattributed != 1 {
			t.Errorf("unattributed %d; want 1", sample.Unattributed)
		}
		for _, arm := range arms {
			want := int64(0)
			if arm == arms[0] {
				want = 1 // the crossover user's first exposure
			}
			if got := sample.Arms[arm].Crossover; got != want {
				t.Errorf("arm %s: crossover %d; want %d", arm, got, want)
			}
		}
		want := f.expected(ms, sample)
		for _, arm := range arms {
			got, exp := sample.Arms[arm], want.Arms[arm]
			if ids := slices.Sorted(slices.Values(got.UserIDs)); !slices.Equal(ids, f.armIDs(arm)) {
				t.Fatalf("arm %s: users %v; want %v", arm, ids, f.armIDs(arm))
			}
			for mi, m := range ms {
				for _, c := range []struct {
					what      string
					got, want []float64
				}{
					{"value", got.Values[mi], exp.Values[mi]}, {"pre-period value", got.Pre[mi], exp.Pre[mi]},
					{"denominator", got.Den[mi], exp.Den[mi]}, {"call", got.Calls[mi].Values, exp.Calls[mi].Values},
				} {
					if err := within(c.got, c.want); err != nil {
						t.Errorf("arm %s, metric %s, %s: %v", arm, m.Name, c.what, err)
					}
				}
				if !slices.Equal(got.Calls[mi].Offsets, exp.Calls[mi].Offsets) {
					t.Errorf("arm %s, metric %s: call offsets %v; want %v", arm, m.Name, got.Calls[mi].Offsets, exp.Calls[mi].Offsets)
				}
			}
		}
		d := results.Design{OrgID: org.ID, ExperimentID: exp.ID, Control: arms[0], Allocation: cfg.Allocation,
			Metrics: ms, Window: w, Limits: plans.Get(plans.Business), Sequential: true}
		gotRows, err := results.Analyze(d, sample, at, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantRows, err := results.Analyze(d, want, at, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(wantRows.Rows) != len(ms) || len(gotRows.Rows) != len(wantRows.Rows) {
			t.Fatalf("%d rows, %d expected; want one per metric, %d", len(gotRows.Rows), len(wantRows.Rows), len(ms))
		}
		for i := range wantRows.Rows {
			if err := SameJSON(gotRows.Rows[i], wantRows.Rows[i]); err != nil {
				t.Errorf("row of %s: %v", wantRows.Rows[i].Metric, err)
			}
		}
		if err := SameJSON(gotRows.SRM, wantRows.SRM); err != nil {
			t.Errorf("SRM: %v", err)
		}
	})

	t.Run("first exposures and phases", func(t *testing.T) {
		checkFirstExposures(t, sample, at)
		// Two phases split at the users' exposure: the crossover user,
		// exposed a millisecond earlier, is phase 1's only user.
		split := at.Add(time.Millisecond)
		d := results.Design{OrgID: org.ID, ExperimentID: exp.ID, Control: arms[0], Allocation: cfg.Allocation,
			Metrics: ms, Window: w, Limits: plans.Get(plans.Business), Sequential: true, Phases: []experiments.Phase{
				{Number: 1, Start: w.Start, End: split, Version: 1, Weights: map[string]float64{arms[0]: 50, arms[1]: 50}},
				{Number: 2, Start: split, End: w.End, Version: 2, Weights: map[string]float64{arms[0]: 50, arms[1]: 50}},
			}}
		got, err := results.Analyze(d, sample, at, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := results.Analyze(d, f.expected(ms, sample), at, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := SameJSON(got.SRM, want.SRM); err != nil {
			t.Errorf("SRM over two phases: %v", err)
		}
		if ph := got.SRM.SRMPhases; ph == nil || ph.Phases[0].Observed[arms[0]] != 1 || ph.Phases[1].Settling != 2*perArm {
			t.Errorf("SRM over two phases: %+v; want the crossover user in phase 1 and the %d others settling in phase 2", ph, 2*perArm)
		}
	})

	t.Run("score metrics", func(t *testing.T) {
		checkScoreMetrics(t, e, f, db, org.ID, exp.ID, w, at)
	})

	t.Run("coverage and traffic", func(t *testing.T) {
		c, err := e.Aggregator.Coverage(ctx, org.ID, exp.ID, w, arms)
		if err != nil {
			t.Fatal(err)
		}
		want := f.coverage()
		checkCoverage(t, "Coverage", c, want)
		// An engine that counts the coverage in the aggregation's read
		// counts the same.
		if sample.Coverage != nil {
			checkCoverage(t, "the aggregation's coverage", *sample.Coverage, want)
		}
		days, err := e.Aggregator.Traffic(ctx, org.ID, exp.ID, at.AddDate(0, 0, -1), at, arms)
		if err != nil || len(days) != 2 {
			t.Fatalf("Traffic = %v, %v; want two days", days, err)
		}
		for _, arm := range arms {
			if n := days[0].Variants[arm]; n != 0 {
				t.Errorf("traffic of %s on %s: %d users; want 0", arm, days[0].Day, n)
			}
			// The crossover user counts under both variants.
			if n := days[1].Variants[arm]; n != perArm+1 {
				t.Errorf("traffic of %s on %s: %d users; want %d", arm, days[1].Day, n, perArm+1)
			}
		}
		// A variant outside the allocation is legitimate history.
		if n := days[1].Variants["retired"]; n != 1 {
			t.Errorf("traffic of retired on %s: %d users; want 1", days[1].Day, n)
		}
		// The org's distinct exposed users: crossover and retired users
		// once each; nothing outside the range.
		exposed := map[string]bool{}
		for _, ev := range f.events {
			if ev.Type == vocab.TypeExposure {
				exposed[ev.UserID] = true
			}
		}
		if n, err := e.Aggregator.ExposedUsers(ctx, org.ID, at.AddDate(0, 0, -1), at.AddDate(0, 0, 1)); err != nil || n != int64(len(exposed)) {
			t.Errorf("ExposedUsers = %d, %v; want %d", n, err, len(exposed))
		}
		if n, err := e.Aggregator.ExposedUsers(ctx, org.ID, at.AddDate(0, 0, -3), at.AddDate(0, 0, -1)); err != nil || n != 0 {
			t.Errorf("ExposedUsers before the exposures = %d, %v; want 0", n, err)
		}
	})

	t.Run("another org's experiment id reads nothing", func(t *testing.T) {
		other := testenv.NewOrg(t, db, testenv.Signer(t))
		s, _, err := e.Aggregator.Aggregate(ctx, other.ID, exp.ID, w, arms, ms, time.Now(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, arm := range arms {
			if n := len(s.Arms[arm].UserIDs); n != 0 {
				t.Errorf("another org's Aggregate of this experiment: %d users in %s; want none", n, arm)
			}
		}
		if c, err := e.Aggregator.Coverage(ctx, other.ID, exp.ID, w, arms); err != nil || c.Counted.Users != 0 || c.Counted.Events != 0 {
			t.Errorf("another org's Coverage = %+v, %v; want nothing counted", c.Counted, err)
		}
		days, err := e.Aggregator.Traffic(ctx, other.ID, exp.ID, at.AddDate(0, 0, -1), at, arms)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range days {
			for v, n := range d.Variants {
				if n != 0 {
					t.Errorf("another org's Traffic: %d users of %s on %s; want none", n, v, d.Day)
				}
			}
		}
		if read, err := e.Events.Read(ctx, ingest.ReadFilter{OrgID: other.ID, ExperimentID: exp.ID, Limit: 10}); err != nil || len(read) != 0 {
			t.Errorf("another org's Read = %d events, %v; want none", len(read), err)
		}
		if mine, err := e.Events.ReadUser(ctx, other.ID, f.users[0].ID); err != nil || len(mine) != 0 {
			t.Errorf("another org's ReadUser = %d events, %v; want none", len(mine), err)
		}
		call := f.events[slices.IndexFunc(f.events, func(ev ingest.EventRow) bool { return ev.Type == vocab.TypeModelCall })]
		if _, found, err := e.Events.ReadCall(ctx, org.ID, call.EventID); err != nil || !found {
			t.Fatalf("ReadCall of the org's own call: found %v, %v", found, err)
		}
		if _, found, err := e.Events.ReadCall(ctx, other.ID, call.EventID); err != nil || found {
			t.Errorf("another org's ReadCall of this org's call: found %v, %v; want not found", found, err)
		}
		if n, err := e.Aggregator.ExposedUsers(ctx, other.ID, at.AddDate(0, 0, -1), at.AddDate(0, 0, 1)); err != nil || n != 0 {
			t.Errorf("another org's ExposedUsers = %d, %v; want 0", n, err)
		}
	})

	t.Run("erasure and purge", func(t *testing.T) {
		u := f.users[0]
		mine, err := e.Events.ReadUser(ctx, org.ID, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := e.Events.DeleteUser(ctx, org.ID, u.ID); err != nil || n != int64(len(mine)) {
			t.Fatalf("DeleteUser = %d, %v; want %d", n, err, len(mine))
		}
		if left, err := e.Events.ReadUser(ctx, org.ID, u.ID); err != nil || len(left) != 0 {
			t.Fatalf("after DeleteUser, ReadUser = %d events, %v", len(left), err)
		}
		s, _, err := e.Aggregator.Aggregate(ctx, org.ID, exp.ID, w, arms, ms, time.Now(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(s.Arms[u.Variant].UserIDs, u.ID) || len(s.Arms[u.Variant].UserIDs) != perArm-1 {
			t.Errorf("after DeleteUser, arm %s has %d users (%v); want %d without %s", u.Variant, len(s.Arms[u.Variant].UserIDs), s.Arms[u.Variant].UserIDs, perArm-1, u.ID)
		}
		left := int64(len(f.events) - len(mine))
		var purged int64
		for {
			n, err := e.Events.PurgeBefore(ctx, org.ID, at.Add(time.Hour), 50)
			if err != nil {
				t.Fatal(err)
			}
			if purged += n; n < 50 {
				break
			}
		}
		if purged != left {
			t.Errorf("PurgeBefore deleted %d events in batches of 50; want %d", purged, left)
		}
		if read, err := e.Events.Read(ctx, ingest.ReadFilter{OrgID: org.ID, ExperimentID: exp.ID, Limit: 10}); err != nil || len(read) != 0 {
			t.Fatalf("after PurgeBefore, Read = %d events, %v", len(read), err)
		}
		if n, err := e.Events.Insert(ctx, f.events[:1]); err != nil || n != 1 {
			t.Errorf("an event sent again after its purge: Insert = %d, %v; want it stored", n, err)
		}
		twice := []ingest.EventRow{f.events[1], f.events[1]}
		if n, err := e.Events.Insert(ctx, twice); err != nil || n != 1 {
			t.Errorf("an event repeated in one batch: Insert = %d, %v; want it stored once", n, err)
		}
	})

	t.Run("a user's pages, their scores' erasure and the scores' purge", func(t *testing.T) {
		checkUserPagesAndScores(t, e.Events, db, at)
	})

	t.Run("every model-call field round-trips", func(t *testing.T) {
		other := testenv.NewOrg(t, db, testenv.Signer(t)) // its own org: the purge above counts this one's
		row := fullModelCall(other.ID, uuid.NewString(), at)
		if n, err := e.Events.Insert(ctx, []ingest.EventRow{row}); err != nil || n != 1 {
			t.Fatalf("Insert = %d, %v; want 1", n, err)
		}
		got, found, err := e.Events.ReadCall(ctx, other.ID, row.EventID)
		if err != nil || !found {
			t.Fatalf("ReadCall = found %v, %v", found, err)
		}
		for _, fd := range vocab.ModelCallFields {
			if !fd.Set(&got.ModelCall) {
				t.Errorf("field %s not stored", fd.Name)
			}
		}
		if err := SameJSON(got.ModelCall, row.ModelCall); err != nil {
			t.Errorf("read back %v", err)
		}
	})
}

// fullModelCall is a model call with every field of vocab.ModelCallFields
// set (the test fails to compile or to pass when a field is added and not
// set here).
func fullModelCall(orgID, experimentID string, at time.Time) ingest.EventRow {
	text := func(s string) *string { return &s }
	num := func(f float64) *float64 { return &f }
	count := func(n int64) *int64 { return &n }
	return ingest.EventRow{OrgID: orgID, EventID: "full-call", Type: vocab.TypeModelCall, ExperimentID: experimentID,
		UserID: "u", Variant: "control", Ts: at, ReceivedAt: at, Source: ingest.SourceAPI,
		ModelCall: vocab.ModelCall{
			Model: text("gpt-4o-mini"), LatencyMs: num(812.5), InputTokens: count(120), OutputTokens: count(30),
			TotalTokens: count(150), CostUSD: num(0.0021), TimeToFirstTokenMs: num(95), Error: text("rate_limit_error"),
			Prompt: text("Hi ✓"), Response: text("Hello"), Provider: text("openai"), FinishReasons: text("stop,length"),
		}}
}

// checkReadCalls pages through the experiment's model calls of one arm,
// 7 at a time, and expects exactly the fixture's, newest first.
func checkReadCalls(t *testing.T, events ingest.EventStore, f fixture, orgID, experimentID string) {
	t.Helper()
	arm := resultstest.Arms[1]
	var want []ingest.EventRow
	for _, ev := range f.events {
		if ev.Type == vocab.TypeModelCall && ev.Variant == arm {
			want = append(want, ev)
		}
	}
	slices.SortFunc(want, func(a, b ingest.EventRow) int {
		if c := b.Ts.Compare(a.Ts); c != 0 {
			return c
		}
		return strings.Compare(b.EventID, a.EventID)
	})
	filter := ingest.CallFilter{OrgID: orgID, ExperimentID: experimentID, Variant: arm, Limit: 7}
	got := pageAll(t, filter.Limit, func() ([]ingest.EventRow, error) { return events.ReadCalls(t.Context(), filter) },
		func(last ingest.EventRow) { filter.BeforeTs, filter.BeforeID = last.Ts, last.EventID })
	ids := make([]string, len(want))
	for i, ev := range want {
		ids[i] = ev.EventID
	}
	if len(ids) <= 7 || !slices.Equal(got, ids) {
		t.Errorf("ReadCalls of %s in pages of 7: %v; want %v", arm, got, ids)
	}
}

// pageAll reads pages of limit until a short one, moving the keyset to
// each page's last row, and returns the event ids in order.
func pageAll(t *testing.T, limit int, read func() ([]ingest.EventRow, error), advance func(last ingest.EventRow)) []string {
	t.Helper()
	var got []string
	for {
		page, err := read()
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range page {
			got = append(got, ev.EventID)
		}
		if len(page) < limit {
			return got
		}
		advance(page[len(page)-1])
	}
}

// checkReadNewCalls pages through the org's model calls in the order
// received, 7 at a time, as an online evaluator polls them, and reads
// single calls by id.
func checkReadNewCalls(t *testing.T, events ingest.EventStore, f fixture, orgID, experimentID string) {
	t.Helper()
	var want []string
	for _, ev := range f.events {
		if ev.Type == vocab.TypeModelCall {
			want = append(want, ev.EventID)
		}
	}
	slices.Sort(want) // every fixture event was received at the same instant
	filter := ingest.NewCallsFilter{OrgID: orgID, ExperimentIDs: []string{experimentID}, Limit: 7}
	got := pageAll(t, filter.Limit, func() ([]ingest.EventRow, error) { return events.ReadNewCalls(t.Context(), filter) },
		func(last ingest.EventRow) { filter.AfterReceived, filter.AfterID = last.ReceivedAt, last.EventID })
	if len(want) <= 7 || !slices.Equal(got, want) {
		t.Errorf("ReadNewCalls in pages of 7: %v; want %v", got, want)
	}
	call, found, err := events.ReadCall(t.Context(), orgID, want[0])
	if err != nil || !found || call.EventID != want[0] || call.Type != vocab.TypeModelCall {
		t.Errorf("ReadCall(%s) = %+v, %v, %v", want[0], call, found, err)
	}
	for _, id := range []string{"x-1", "no-such-call"} { // an exposure, an unknown id
		if _, found, err := events.ReadCall(t.Context(), orgID, id); err != nil || found {
			t.Errorf("ReadCall(%s) found %v, %v; want not found", id, found, err)
		}
	}
}

// checkFirstExposures requires every user's first exposure in the
// window (the fixture's users at a millisecond past at, the crossover
// user at at), in the arm's user order.
func checkFirstExposures(t *testing.T, s results.Sample, at time.Time) {
	t.Helper()
	for name, arm := range s.Arms {
		if len(arm.First) != len(arm.UserIDs) {
			t.Fatalf("arm %s: %d first exposures for %d users", name, len(arm.First), len(arm.UserIDs))
		}
		for u, first := range arm.First {
			if !first.Equal(at.Add(time.Millisecond)) {
				t.Errorf("arm %s, user %s: first exposure %s; want %s", name, arm.UserIDs[u], first, at.Add(time.Millisecond))
			}
		}
		want := []time.Time{}
		if name == resultstest.Arms[0] {
			want = append(want, at)
		}
		if !slices.EqualFunc(arm.CrossoverFirst, want, time.Time.Equal) {
			t.Errorf("arm %s: crossover users' first exposures %v; want %v", name, arm.CrossoverFirst, want)
		}
	}
}

// config is resultstest.Config with a metric of every kind; a kind
// without one fails the suite, so a new kind comes with its case here.
func config(t *testing.T) experiments.Config {
	cfg := resultstest.Config("conformance")
	shared := false
	calls := experiments.MetricSource{EventType: vocab.TypeModelCall, Field: "latency_ms"}
	perCall := experiments.MetricSource{EventType: vocab.TypeModelCall}
	cfg.Metrics = append(cfg.Metrics,
		experiments.Metric{Name: "calls", Kind: vocab.Count, Category: "secondary", MethodDefault: string(stats.WelchT), MetricVersion: 1, SharedOrgWide: &shared, Source: &calls},
		experiments.Metric{Name: "latency_per_call", Kind: vocab.Ratio, Category: "secondary", MetricVersion: 1, SharedOrgWide: &shared, Source: &calls, Denominator: &perCall},
		experiments.Metric{Name: metrics.LatencyP95Ms, Kind: vocab.Quantile, Category: "guardrail", MetricVersion: 1, SharedOrgWide: &shared},
	)
	for _, k := range vocab.Kinds {
		if !slices.ContainsFunc(cfg.Metrics, func(m experiments.Metric) bool { return m.Kind == k.Name }) {
			t.Fatalf("enginetest: no metric of kind %s: add one to config and its value to userValue", k.Name)
		}
	}
	return cfg
}

// fixture is the suite's events: resultstest's users (an exposure, three
// model calls, a conversion and revenue for some), every third with a
// model call two days before (the CUPED pre-period, before the window),
// a crossover user, one exposed to a variant outside the allocation, and
// one with a model call and no exposure.
type fixture struct {
	at     time.Time // the exposures' instant (resultstest.Events)
	users  []resultstest.User
	pre    map[string][]float64 // user -> pre-period latencies
	events []ingest.EventRow
}

func newFixture(orgID, experimentID string, at time.Time) fixture {
	f := fixture{at: at, users: resultstest.Users(perArm, 7), pre: map[string][]float64{}}
	f.events = resultstest.Events(orgID, experimentID, f.users, at)
	event := func(id string, typ vocab.RecordType, user, variant string, ts time.Time, latency float64) ingest.EventRow {
		e := ingest.EventRow{OrgID: orgID, EventID: id, Type: typ, ExperimentID: experimentID, UserID: user,
			Variant: variant, Ts: ts, Source: ingest.SourceAPI}
		if typ == vocab.TypeModelCall {
			e.LatencyMs = &latency
		}
		return e
	}
	for i, u := range f.users {
		if i%3 == 1 {
			l := 100 + float64(i)
			f.pre[u.ID] = []float64{l}
			f.events = append(f.events, event(u.ID+"-pre", vocab.TypeModelCall, u.ID, u.Variant, at.AddDate(0, 0, -2), l))
		}
	}
	f.events = append(f.events,
		event("x-1", vocab.TypeExposure, "crossover", resultstest.Arms[0], at, 0),
		event("x-2", vocab.TypeExposure, "crossover", resultstest.Arms[1], at.Add(time.Second), 0),
		event("x-3", vocab.TypeModelCall, "crossover", resultstest.Arms[1], at.Add(2*time.Second), 500),
		event("r-1", vocab.TypeExposure, "retired", "retired", at, 0),
		event("r-2", vocab.TypeModelCall, "retired", "retired", at.Add(time.Second), 600),
		event("u-1", vocab.TypeModelCall, "unexposed", resultstest.Arms[0], at.Add(time.Second), 700),
	)
	for i := range f.events {
		f.events[i].ReceivedAt = at
	}
	return f
}

// armIDs are the ids of the users counted in arm, sorted.
func (f fixture) armIDs(arm string) []string {
	var out []string
	for _, u := range f.users {
		if u.Variant == arm {
			out = append(out, u.ID)
		}
	}
	slices.Sort(out)
	return out
}

// expected is the Sample the fixture must give, computed from the users,
// in got's user order (an engine's row order is its own).
func (f fixture) expected(ms []metrics.Resolved, got results.Sample) results.Sample {
	byID := map[string]resultstest.User{}
	for _, u := range f.users {
		byID[u.ID] = u
	}
	s := results.Sample{Arms: map[string]*results.Arm{}, Unattributed: 1}
	for name, g := range got.Arms {
		a := &results.Arm{UserIDs: g.UserIDs, Values: make([][]float64, len(ms)), Pre: make([][]float64, len(ms)),
			Den: make([][]float64, len(ms)), Calls: make([]stats.Calls, len(ms))}
		if name == resultstest.Arms[0] {
			a.Crossover, a.CrossoverFirst = 1, []time.Time{f.at}
		}
		for _, id := range g.UserIDs {
			a.First = append(a.First, f.at.Add(time.Millisecond))
			u := byID[id]
			prior := resultstest.User{ID: u.ID, Variant: u.Variant, Latencies: f.pre[u.ID]}
			for mi, m := range ms {
				v, calls, den := userValue(u, m)
				switch m.Kind.Spec().Compare {
				case vocab.ByCall:
					c := &a.Calls[mi]
					c.Offsets = append(c.Offsets, len(c.Values))
					c.Values = append(c.Values, calls...)
					slices.Sort(c.Values[c.Offsets[len(c.Offsets)-1]:]) // a user's calls by value, on every engine
				case vocab.ByRatio:
					a.Values[mi], a.Den[mi] = append(a.Values[mi], v), append(a.Den[mi], den)
				default:
					a.Values[mi] = append(a.Values[mi], v)
				}
				if m.UsesCUPED() {
					x := 0.0 // no pre-period events: 0 (docs/results.md)
					if len(prior.Latencies) > 0 {
						x, _, _ = userValue(prior, m)
					}
					a.Pre[mi] = append(a.Pre[mi], x)
				}
			}
		}
		for mi := range a.Calls {
			if c := &a.Calls[mi]; len(c.Offsets) > 0 {
				c.Offsets = append(c.Offsets, len(c.Values))
			}
		}
		s.Arms[name] = a
	}
	return s
}

// userValue is user u's value of metric m (for a ratio: the numerator),
// their calls and their denominator.
func userValue(u resultstest.User, m metrics.Resolved) (v float64, calls []float64, den float64) {
	var sum float64
	for _, l := range u.Latencies {
		sum += l
	}
	switch m.Name {
	case "calls":
		return float64(len(u.Latencies)), nil, 0
	case "latency_per_call":
		return sum, nil, float64(len(u.Latencies))
	case metrics.LatencyP95Ms:
		return 0, u.Latencies, 0
	}
	return resultstest.Values([]resultstest.User{u}, m.Name)[u.Variant][0], nil, 0
}

// checkCoverage checks a coverage against the fixture's: every tally,
// every reason once with its reason in words.
func checkCoverage(t *testing.T, what string, c, want results.Coverage) {
	t.Helper()
	if c.Counted != want.Counted {
		t.Errorf("%s: counted %+v; want %+v", what, c.Counted, want.Counted)
	}
	if len(c.LeftOut) != len(want.LeftOut) {
		t.Fatalf("%s: left out %+v; want every reason once: %+v", what, c.LeftOut, want.LeftOut)
	}
	for i, l := range want.LeftOut {
		if got := c.LeftOut[i]; got.Reason != l.Reason || got.Tally != l.Tally || got.Detail == "" {
			t.Errorf("%s: left out %+v; want %+v with its reason in words", what, got, l)
		}
	}
}

// coverage is what the fixture's coverage must be (without the reasons'
// words).
func (f fixture) coverage() results.Coverage {
	var counted results.Tally
	for _, u := range f.users {
		counted.Users++
		counted.Exposures++
		counted.Events += int64(len(u.Latencies))
		if u.Converted {
			counted.Events += 2
		}
	}
	left := map[string]results.Tally{
		results.LeftBeforeStart:  {Users: int64(len(f.pre)), Events: int64(len(f.pre))},
		results.LeftCrossover:    {Users: 1, Exposures: 2, Events: 1},
		results.LeftUnattributed: {Users: 1, Exposures: 1, Events: 1},
		results.LeftUnexposed:    {Users: 1, Events: 1},
	}
	c := results.Coverage{Counted: counted}
	for _, r := range []string{results.LeftBeforeStart, results.LeftAfterEnd, results.LeftUnexposed, results.LeftUnattributed, results.LeftCrossover} {
		c.LeftOut = append(c.LeftOut, results.LeftOut{Reason: r, Tally: left[r]})
	}
	return c
}

// within checks got against want value by value, within Tolerance.
func within(got, want []float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d values; want %d", len(got), len(want))
	}
	for i := range want {
		if !near(got[i], want[i]) {
			return fmt.Errorf("value %d is %v; want %v", i, got[i], want[i])
		}
	}
	return nil
}

func near(a, b float64) bool {
	if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
		return true
	}
	return math.Abs(a-b) <= Tolerance*math.Max(math.Abs(a), math.Abs(b))
}

// SameJSON compares two values through their JSON: numbers within
// Tolerance, everything else equal (also what the end-to-end tests use to
// compare results served from two engines).
func SameJSON(got, want any) error {
	var g, w any
	for _, p := range []struct {
		v   any
		dst *any
	}{{got, &g}, {want, &w}} {
		b, err := json.Marshal(p.v)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, p.dst); err != nil {
			return err
		}
	}
	return sameValue("", g, w)
}

func sameValue(path string, g, w any) error {
	switch wv := w.(type) {
	case float64:
		if gv, ok := g.(float64); !ok || !near(gv, wv) {
			return fmt.Errorf("%s = %v; want %v", path, g, w)
		}
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok || len(gv) != len(wv) {
			return fmt.Errorf("%s = %v; want %v", path, g, w)
		}
		for k := range wv {
			if err := sameValue(path+"."+k, gv[k], wv[k]); err != nil {
				return err
			}
		}
	case []any:
		gv, ok := g.([]any)
		if !ok || len(gv) != len(wv) {
			return fmt.Errorf("%s = %v; want %v", path, g, w)
		}
		for i := range wv {
			if err := sameValue(fmt.Sprintf("%s[%d]", path, i), gv[i], wv[i]); err != nil {
				return err
			}
		}
	default:
		if g != w {
			return fmt.Errorf("%s = %v; want %v", path, g, w)
		}
	}
	return nil
}

// checkScoreMetrics stores scores of the fixture's model calls through
// the events store (a judge's grade of most calls and of the pre-period
// calls, human and code thumbs of some, a grade replaced by a later one,
// orphans in and out of the window) and requires the aggregation of two
// score metrics (docs/quality.md, "Score metrics") to give each user the
// mean over their scored calls, their calls and scored calls, the CUPED
// covariate from the pre-period grades, and the orphans.
func checkScoreMetrics(t *testing.T, e Engine, f fixture, db *gorm.DB, orgID, experimentID string, w results.Window, at time.Time) {
	ctx := t.Context()
	shared := false
	judge := experiments.MetricSource{EventType: vocab.TypeScore, Score: "helpfulness", ScoreSource: scores.SourceJudge}
	thumbs := experiments.MetricSource{EventType: vocab.TypeScore, Score: "thumbs_up"}
	ms, err := metrics.Resolve(ctx, metrics.Store{DB: db}, orgID, []experiments.Metric{
		{Name: "helpfulness", Kind: vocab.Mean, Category: "primary", MethodDefault: string(stats.WelchT), MetricVersion: 1, SharedOrgWide: &shared, Source: &judge},
		{Name: "thumbs", Kind: vocab.Proportion, Category: "primary", MethodDefault: string(stats.WelchT), MetricVersion: 1, SharedOrgWide: &shared, Source: &thumbs},
	})
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]int{}
	for i, u := range f.users {
		users[u.ID] = i
	}
	score := func(call, name, source string, v float64, ts time.Time) scores.Row {
		return scores.Row{OrgID: orgID, CallID: call, Name: name, Source: source, Value: v, Ts: ts}
	}
	// want[metric][user]: the scored calls' values; calls[user]: calls
	// counted; pre[user]: the pre-period grade.
	grades, thumbVals := map[string][]float64{}, map[string][]float64{}
	calls, pre := map[string]int{}, map[string]float64{}
	var rows []scores.Row
	k := 0
	for _, ev := range f.events {
		i, counted := users[ev.UserID]
		if ev.Type != vocab.TypeModelCall || !counted {
			continue
		}
		grade := math.Round(*ev.LatencyMs) / 100
		if ev.Ts.Before(at) { // the pre-period call
			rows = append(rows, score(ev.EventID, "helpfulness", scores.SourceJudge, grade, ev.Ts.Add(time.Second)))
			pre[ev.UserID] = grade
			continue
		}
		calls[ev.UserID]++
		k++
		if (i+k)%3 != 0 {
			rows = append(rows, score(ev.EventID, "helpfulness", scores.SourceJudge, grade, at.Add(time.Minute)))
			grades[ev.UserID] = append(grades[ev.UserID], grade)
		}
		if i%2 == 0 && k%2 == 0 {
			up := float64(i % 4 / 2 * 3) // 0 or 3: non-zero is up
			rows = append(rows, score(ev.EventID, "thumbs_up", scores.SourceHuman, up, at.Add(time.Minute)))
			v := min(up, 1)
			if i%3 == 0 { // a code check of the same call: the call's value is the mean of its sources'
				rows = append(rows, score(ev.EventID, "thumbs_up", scores.SourceCode, 1, at.Add(time.Minute)))
				v = (v + 1) / 2
			}
			thumbVals[ev.UserID] = append(thumbVals[ev.UserID], v)
		}
	}
	// A grade replaced by a later one (the first graded call), orphans in
	// the window (one of each metric) and one before it.
	first := rows[1]
	stale := first
	stale.Value, stale.Ts = 99, first.Ts.Add(-time.Second)
	rows = append([]scores.Row{stale}, rows...)
	rows = append(rows, score("no-such-call", "helpfulness", scores.SourceJudge, 1, at),
		score("no-such-call", "thumbs_up", scores.SourceHuman, 1, at), score("no-such-call-2", "thumbs_up", scores.SourceCode, 1, at),
		score("old-orphan", "helpfulness", scores.SourceJudge, 1, at.Add(-3*time.Hour)))
	if _, err := e.Events.UpsertScores(ctx, rows, at); err != nil {
		t.Fatal(err)
	}
	if n, err := e.Events.UpsertScores(ctx, rows[len(rows)-4:], at); err != nil || n != 0 {
		t.Errorf("the same scores again: UpsertScores = %d, %v; want 0", n, err)
	}
	s, _, err := e.Aggregator.Aggregate(ctx, orgID, experimentID, w, resultstest.Arms, ms, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	mean := func(xs []float64) float64 {
		if len(xs) == 0 {
			return math.NaN()
		}
		var sum float64
		for _, x := range xs {
			sum += x
		}
		return sum / float64(len(xs))
	}
	unscored := 0
	for _, arm := range resultstest.Arms {
		a := s.Arms[arm]
		for ui, id := range a.UserIDs {
			for mi, vals := range []map[string][]float64{grades, thumbVals} {
				want := mean(vals[id])
				got := a.Values[mi][ui]
				if math.IsNaN(want) != math.IsNaN(got) || !math.IsNaN(want) && !near(got, want) {
					t.Errorf("%s of %s: %v; want %v (the mean of %v)", ms[mi].Name, id, got, want, vals[id])
				}
				if a.Den[mi][ui] != float64(calls[id]) || a.Scored[mi][ui] != int64(len(vals[id])) {
					t.Errorf("%s of %s: %v calls, %d scored; want %d, %d", ms[mi].Name, id, a.Den[mi][ui], a.Scored[mi][ui], calls[id], len(vals[id]))
				}
				if math.IsNaN(want) {
					unscored++
				}
			}
			if x := a.Pre[0][ui]; !near(x, pre[id]) {
				t.Errorf("helpfulness of %s: pre-period %v; want %v", id, x, pre[id])
			}
		}
	}
	if unscored == 0 {
		t.Error("every user has scores: the suite checks no unscored user")
	}
	if o := s.Orphans; o == nil || o.Total != 3 || o.ByMetric["helpfulness"] != 1 || o.ByMetric["thumbs"] != 2 {
		t.Errorf("orphans %+v; want 3: helpfulness 1, thumbs 2 (the one before the window not counted)", o)
	}
	checkScoresOfCalls(t, e.Events, db, rows, first, at)
}

// checkScoresOfCalls requires ScoresOfCalls to read back the winners of
// stored (scores.Latest: the replaced grade once, with its later value),
// sorted by name then source, only for the calls asked (a grade replaced
// by a later write reads once, the later), and nothing for
// another org asking with the same call ids.
func checkScoresOfCalls(t *testing.T, events ingest.EventStore, db *gorm.DB, stored []scores.Row, first scores.Row, at time.Time) {
	ctx := t.Context()
	// A later write replaces a stored grade: stored apart, so the engine
	// holds both rows until it collapses them.
	replaced := first
	replaced.Value, replaced.Ts = first.Value+0.5, first.Ts.Add(time.Minute)
	if n, err := events.UpsertScores(ctx, []scores.Row{replaced}, at); err != nil || n != 1 {
		t.Fatalf("a later grade: UpsertScores = %d, %v; want 1", n, err)
	}
	kept, _ := scores.Latest(append(slices.Clone(stored), replaced))
	want := map[string][]scores.Row{}
	var ids []string
	for _, r := range kept {
		if len(want) == 5 && want[r.CallID] == nil {
			continue // a few calls; the rest must not be read
		}
		if want[r.CallID] == nil {
			ids = append(ids, r.CallID)
		}
		want[r.CallID] = append(want[r.CallID], r)
	}
	if want[replaced.CallID] == nil {
		ids = append(ids, replaced.CallID)
		for _, r := range kept {
			if r.CallID == replaced.CallID {
				want[r.CallID] = append(want[r.CallID], r)
			}
		}
	}
	got, err := events.ScoresOfCalls(ctx, replaced.OrgID, append(ids, "never-scored"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("ScoresOfCalls: %d calls; want %d", len(got), len(want))
	}
	for id, ws := range want {
		gs := got[id]
		if len(gs) != len(ws) {
			t.Errorf("ScoresOfCalls of %s: %d scores; want %d", id, len(gs), len(ws))
			continue
		}
		for i := range ws {
			g, w := gs[i], ws[i]
			if scores.KeyOf(&g) != scores.KeyOf(&w) || g.Value != w.Value || !g.Ts.Equal(w.Ts) {
				t.Errorf("ScoresOfCalls of %s [%d]: %+v %v at %v; want %+v %v at %v", id, i, scores.KeyOf(&g), g.Value, g.Ts, scores.KeyOf(&w), w.Value, w.Ts)
			}
		}
	}
	var grades int
	for _, g := range got[replaced.CallID] {
		if scores.KeyOf(&g) == scores.KeyOf(&replaced) {
			grades++
			if g.Value != replaced.Value {
				t.Errorf("the replaced grade reads %v; want the later %v", g.Value, replaced.Value)
			}
		}
	}
	if grades != 1 {
		t.Errorf("the replaced grade reads %d times; want once", grades)
	}
	other := testenv.NewOrg(t, db, testenv.Signer(t))
	if leak, err := events.ScoresOfCalls(ctx, other.ID, ids); err != nil || len(leak) != 0 {
		t.Errorf("another org's ScoresOfCalls of the same call ids = %d calls, %v; want none", len(leak), err)
	}
}

// checkUserPagesAndScores checks the export's and the erasure's
// primitives in orgs of their own: ReadUserPage pages a user's events in
// (ts, event_id) order across page boundaries, ties of ts included, and
// from any position; DeleteScores removes exactly the named calls'
// scores of one org (another org's scores of the same call ids stay);
// PurgeScoresBefore removes exactly the org's scores stamped before the
// cutoff.
func checkUserPagesAndScores(t *testing.T, events ingest.EventStore, db *gorm.DB, at time.Time) {
	ctx := t.Context()
	org, other := testenv.NewOrg(t, db, testenv.Signer(t)), testenv.NewOrg(t, db, testenv.Signer(t))
	const user = "paged-user"
	var mine, theirs []ingest.EventRow
	// 23 events over three days and two experiments, in groups of three
	// sharing a timestamp, ids out of time order; the same user id in
	// another org, and another user of this org, at the same times.
	exps := []string{uuid.NewString(), uuid.NewString()}
	for i := range 23 {
		ts := at.AddDate(0, 0, -2+i/9).Add(time.Duration(i/3) * time.Minute)
		ev := ingest.EventRow{OrgID: org.ID, EventID: fmt.Sprintf("page-%02d", (i*7)%23), Type: vocab.TypeModelCall,
			ExperimentID: exps[i%2], UserID: user, Variant: resultstest.Arms[0], Ts: ts, ReceivedAt: at, Source: ingest.SourceAPI}
		mine = append(mine, ev)
		o := ev
		o.OrgID, o.EventID = other.ID, fmt.Sprintf("theirs-%02d", i)
		theirs = append(theirs, o)
		n := ev
		n.UserID, n.EventID = "neighbour", fmt.Sprintf("neighbour-%02d", i)
		theirs = append(theirs, n)
	}
	if n, err := events.Insert(ctx, append(slices.Clone(mine), theirs...)); err != nil || n != len(mine)+len(theirs) {
		t.Fatalf("Insert = %d, %v; want %d", n, err, len(mine)+len(theirs))
	}
	slices.SortFunc(mine, func(a, b ingest.EventRow) int {
		if c := a.Ts.Compare(b.Ts); c != 0 {
			return c
		}
		return strings.Compare(a.EventID, b.EventID)
	})
	want := make([]string, len(mine))
	for i, ev := range mine {
		want[i] = ev.EventID
	}
	for _, limit := range []int{1, 5, 6, 23, 100} {
		var pos ingest.UserPosition
		got := pageAll(t, limit, func() ([]ingest.EventRow, error) { return events.ReadUserPage(ctx, org.ID, user, pos, limit) },
			func(last ingest.EventRow) { pos = ingest.UserPosition{AfterTs: last.Ts, AfterID: last.EventID} })
		if !slices.Equal(got, want) {
			t.Errorf("ReadUserPage in pages of %d: %v; want %v", limit, got, want)
		}
	}
	// From inside a group of equal timestamps: the rest of the group
	// (by id), then the later events.
	for _, k := range []int{0, 3, 4, 10, 22} {
		pos := ingest.UserPosition{AfterTs: mine[k].Ts, AfterID: mine[k].EventID}
		page, err := events.ReadUserPage(ctx, org.ID, user, pos, 4)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ev := range page {
			got = append(got, ev.EventID)
			if ev.OrgID != org.ID || ev.UserID != user {
				t.Errorf("ReadUserPage read event %s of org %s, user %s", ev.EventID, ev.OrgID, ev.UserID)
			}
		}
		if w := want[k+1 : min(k+5, len(want))]; !slices.Equal(got, w) {
			t.Errorf("ReadUserPage after event %d (%s): %v; want %v", k, mine[k].EventID, got, w)
		}
	}
	if page, err := events.ReadUserPage(ctx, other.ID, "no-such-user", ingest.UserPosition{}, 10); err != nil || len(page) != 0 {
		t.Errorf("ReadUserPage of an unknown user = %d events, %v; want none", len(page), err)
	}

	// Scores: the same call ids in both orgs, two names each, stamped
	// over the three days.
	var rows []scores.Row
	for i, ev := range mine {
		for _, o := range []string{org.ID, other.ID} {
			rows = append(rows,
				scores.Row{OrgID: o, CallID: ev.EventID, Name: "helpfulness", Source: scores.SourceJudge, Value: float64(i), Ts: ev.Ts},
				scores.Row{OrgID: o, CallID: ev.EventID, Name: "thumbs_up", Source: scores.SourceHuman, Value: 1, Ts: ev.Ts.Add(time.Second)})
		}
	}
	if n, err := events.UpsertScores(ctx, rows, at); err != nil || n != len(rows) {
		t.Fatalf("UpsertScores = %d, %v; want %d", n, err, len(rows))
	}
	countScores := func(orgID string) map[string]int {
		t.Helper()
		got, err := events.ScoresOfCalls(ctx, orgID, want)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for id, rs := range got {
			out[id] = len(rs)
		}
		return out
	}
	erased := []string{want[0], want[5], want[6], "never-scored"}
	if n, err := events.DeleteScores(ctx, org.ID, erased); err != nil || n != 6 {
		t.Fatalf("DeleteScores of 3 scored calls (2 scores each) and 1 unscored = %d, %v; want 6", n, err)
	}
	left := countScores(org.ID)
	for _, id := range want {
		w := 2
		if slices.Contains(erased, id) {
			w = 0
		}
		if left[id] != w {
			t.Errorf("after DeleteScores, call %s has %d scores in the org; want %d", id, left[id], w)
		}
	}
	for _, id := range want {
		if n := countScores(other.ID)[id]; n != 2 {
			t.Errorf("after the org's DeleteScores, another org's call %s with the same id has %d scores; want 2 (untouched)", id, n)
		}
	}
	if n, err := events.DeleteScores(ctx, org.ID, erased); err != nil || n != 0 {
		t.Errorf("DeleteScores again = %d, %v; want 0", n, err)
	}

	// The cutoff falls between a call's two scores (helpfulness at ts,
	// thumbs_up a second later) on the middle day.
	cut := mine[12]
	cutoff := cut.Ts.Add(time.Second / 2)
	// A grade of an early call replaced by a later one past the cutoff:
	// the engine may hold both rows until it collapses them; the grade in
	// force is after the cutoff, so it stays.
	regraded := rows[slices.IndexFunc(rows, func(r scores.Row) bool { return r.OrgID == org.ID && r.CallID == want[1] })]
	regraded.Value, regraded.Ts = 42, cutoff.Add(time.Hour)
	if n, err := events.UpsertScores(ctx, []scores.Row{regraded}, at); err != nil || n != 1 {
		t.Fatalf("a later grade: UpsertScores = %d, %v; want 1", n, err)
	}
	rows = append(rows, regraded)
	rows, _ = scores.Latest(rows)
	var wantGone int64
	before := map[string]int{}
	for _, r := range rows {
		if r.OrgID == org.ID && !slices.Contains(erased, r.CallID) && r.Ts.Before(cutoff) {
			wantGone++
			before[r.CallID]++
		}
	}
	if n, err := events.PurgeScoresBefore(ctx, org.ID, cutoff); err != nil || n != wantGone {
		t.Fatalf("PurgeScoresBefore = %d, %v; want %d", n, err, wantGone)
	}
	left = countScores(org.ID)
	for _, id := range want {
		w := 2 - before[id]
		if slices.Contains(erased, id) {
			w = 0
		}
		if left[id] != w {
			t.Errorf("after PurgeScoresBefore, call %s has %d scores; want %d", id, left[id], w)
		}
	}
	got, err := events.ScoresOfCalls(ctx, org.ID, []string{cut.EventID})
	if err != nil {
		t.Fatal(err)
	}
	if rs := got[cut.EventID]; len(rs) != 1 || rs[0].Name != "thumbs_up" {
		t.Errorf("the call at the cutoff keeps %+v; want its later score only (thumbs_up)", rs)
	}
	for _, id := range want {
		if n := countScores(other.ID)[id]; n != 2 {
			t.Errorf("after the org's PurgeScoresBefore, another org's call %s has %d scores; want 2", id, n)
		}
	}
}
