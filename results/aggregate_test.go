package results_test

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/results"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/vocab"
)

// aggregateFixture is an experiment with synthetic users plus events the
// aggregation must ignore or treat specially.
type aggregateFixture struct {
	db     *testenv.Env
	orgID  string
	expID  string
	users  []resultstest.User
	window results.Window
}

func newAggregateFixture(t *testing.T) aggregateFixture {
	env := testenv.New(t)
	org := env.NewOrg(t)
	exp := resultstest.Experiment(t, env.DB, org.ID, resultstest.Config("agg"))
	other := resultstest.Experiment(t, env.DB, org.ID, resultstest.Config("other"))
	at := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	users := resultstest.Users(40, 7)
	events := resultstest.Events(org.ID, exp.ID, users, at)
	// Noise the query must leave out: another experiment's events, a model
	// call before the user's first exposure, events after the window, a
	// later exposure to the other arm, and an unknown variant.
	u0 := users[0]
	early, late := 1e6, 2e6
	events = append(events, resultstest.Events(org.ID, other.ID, users[:5], at)...)
	events = append(events,
		ingest.EventRow{OrgID: org.ID, EventID: "early", Type: "model_call", ExperimentID: exp.ID, UserID: u0.ID, Variant: u0.Variant, Ts: at.Add(-time.Minute), ReceivedAt: at, ModelCall: vocab.ModelCall{LatencyMs: &early}},
		ingest.EventRow{OrgID: org.ID, EventID: "late", Type: "model_call", ExperimentID: exp.ID, UserID: u0.ID, Variant: u0.Variant, Ts: at.Add(2 * time.Hour), ReceivedAt: at, ModelCall: vocab.ModelCall{LatencyMs: &late}},
		ingest.EventRow{OrgID: org.ID, EventID: "switch", Type: "exposure", ExperimentID: exp.ID, UserID: u0.ID, Variant: "treatment", Ts: at.Add(time.Minute), ReceivedAt: at},
		ingest.EventRow{OrgID: org.ID, EventID: "stranger", Type: "exposure", ExperimentID: exp.ID, UserID: "stranger", Variant: "nope", Ts: at, ReceivedAt: at},
	)
	// A user exposed with no other event: 0 for sums and proportions, out
	// of means.
	idle := resultstest.User{ID: "idle", Variant: "control"}
	events = append(events, ingest.EventRow{OrgID: org.ID, EventID: "idle", Type: "exposure", ExperimentID: exp.ID, UserID: idle.ID, Variant: idle.Variant, Ts: at, ReceivedAt: at})
	resultstest.Insert(t, env.DB, events)
	return aggregateFixture{db: env, orgID: org.ID, expID: exp.ID, users: append(users, idle),
		window: results.NewWindow(at.Add(-time.Hour), at.Add(time.Hour), 30)}
}

func TestAggregateComputesPerUserValuesInSQL(t *testing.T) {
	f := newAggregateFixture(t)
	ms, err := metrics.Resolve(context.Background(), metrics.Store{DB: f.db.DB}, f.orgID, resultstest.Config("x").Metrics)
	if err != nil {
		t.Fatal(err)
	}
	s, err := results.Aggregate(context.Background(), f.db.DB, f.orgID, f.expID, f.window, resultstest.Arms, ms, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Unattributed != 1 {
		t.Errorf("unattributed = %d, want 1 (the unknown variant)", s.Unattributed)
	}
	// users[0] also saw the other arm: a crossover user, out of every metric.
	for mi, name := range resultstest.Metrics {
		want := resultstest.Values(f.users[1:], name)
		if name == "latency_ms" { // the idle user has no latency: out of the mean
			want["control"] = want["control"][:len(want["control"])-1]
		}
		for _, arm := range resultstest.Arms {
			got := finite(s.Arms[arm].Values[mi])
			if !sameMultiset(got, want[arm]) {
				t.Errorf("%s/%s: got %d values %v\nwant %d values %v", name, arm, len(got), got, len(want[arm]), want[arm])
			}
		}
	}
	control := s.Arms["control"]
	if n := len(control.UserIDs); n != 40 || control.Crossover != 1 || control.Exposed() != 41 {
		t.Errorf("control has %d users and %d crossover, want 40 + 1 (the switcher counts for SRM in its first arm, in no metric)", n, control.Crossover)
	}
	if s.Arms["treatment"].Crossover != 0 {
		t.Errorf("treatment crossover = %d, want 0", s.Arms["treatment"].Crossover)
	}
}

func finite(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}

// sameMultiset compares values up to order and float summation error.
func sameMultiset(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9*math.Max(1, math.Abs(b[i])) {
			return false
		}
	}
	return true
}
