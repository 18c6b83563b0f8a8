package results_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/results"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/vocab"
)

// One read of the events gives a run both its coverage and its quantile
// calls: the coverage equals CountCoverage's, and the calls are the
// counted users' calls, user by user, from the first exposure on (a call
// stamped at the exposure's very instant counts, whatever its id).
func TestReadEventsCountsCoverageAndCollectsCallsInOnePass(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	exp := resultstest.Experiment(t, env.DB, org.ID, resultstest.Config("pass"))
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	w := results.NewWindow(t0.Add(-time.Hour), t0.Add(time.Hour), 30)
	var events []ingest.EventRow
	add := func(id, typ, user, variant string, ts time.Time, latency float64) {
		e := ingest.EventRow{OrgID: org.ID, EventID: id, Type: vocab.RecordType(typ), ExperimentID: exp.ID, UserID: user, Variant: variant, Ts: ts, ReceivedAt: t0, Source: "api"}
		if typ == "model_call" {
			e.LatencyMs = &latency
		}
		events = append(events, e)
	}
	add("a0", "model_call", "u1", "control", t0.Add(-time.Second), 5) // unexposed
	add("a1", "model_call", "u1", "control", t0, 10)                  // same instant as the exposure, smaller id: counted
	add("b1", "exposure", "u1", "control", t0, 0)
	add("c1", "model_call", "u1", "control", t0.Add(time.Second), 30)
	add("b2", "exposure", "u2", "treatment", t0, 0)
	add("c2", "model_call", "u2", "treatment", t0.Add(time.Second), 40)
	add("d2", "model_call", "u2", "treatment", t0.Add(2*time.Second), 50)
	add("e2", "model_call", "u2", "treatment", t0.Add(3*time.Hour), 99) // after the end
	add("b3", "exposure", "u3", "control", t0, 0)                       // crossover
	add("c3", "exposure", "u3", "treatment", t0.Add(time.Second), 0)
	add("d3", "model_call", "u3", "treatment", t0.Add(2*time.Second), 70)
	add("b4", "exposure", "u4", "retired", t0, 0) // unattributed
	add("c4", "model_call", "u4", "retired", t0.Add(time.Second), 80)
	add("b5", "exposure", "u5", "control", w.Start.Add(-time.Minute), 0) // before the start
	add("c5", "model_call", "u5", "control", w.Start.Add(-30*time.Second), 60)
	resultstest.Insert(t, env.DB, events)

	shared := false
	ms, err := metrics.Resolve(context.Background(), metrics.Store{DB: env.DB}, org.ID, []experiments.Metric{
		{Name: "latency_ms", Kind: "mean", Category: "guardrail", MethodDefault: "welch_t", MetricVersion: 1, SharedOrgWide: &shared},
		{Name: "latency_p95_ms", Kind: "quantile", Category: "guardrail", MetricVersion: 1, SharedOrgWide: &shared},
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := results.Aggregate(t.Context(), env.DB, org.ID, exp.ID, w, resultstest.Arms, ms, nil)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := results.CountCoverage(t.Context(), env.DB, org.ID, exp.ID, w, resultstest.Arms)
	if err != nil {
		t.Fatal(err)
	}
	if s.Coverage == nil || !reflect.DeepEqual(*s.Coverage, alone) {
		t.Fatalf("coverage from the aggregation %+v, alone %+v", s.Coverage, alone)
	}
	if want := (results.Tally{Users: 2, Exposures: 2, Events: 4}); alone.Counted != want {
		t.Errorf("counted %+v, want %+v", alone.Counted, want)
	}
	want := map[string]results.Tally{
		results.LeftBeforeStart: {Users: 1, Exposures: 1, Events: 1}, results.LeftAfterEnd: {Users: 1, Events: 1},
		results.LeftUnexposed: {Users: 1, Events: 1}, results.LeftUnattributed: {Users: 1, Exposures: 1, Events: 1},
		results.LeftCrossover: {Users: 1, Exposures: 2, Events: 1},
	}
	for _, l := range alone.LeftOut {
		if l.Tally != want[l.Reason] {
			t.Errorf("left out %s: %+v, want %+v", l.Reason, l.Tally, want[l.Reason])
		}
	}
	for arm, calls := range map[string]stats.Calls{
		"control":   {Values: []float64{10, 30}, Offsets: []int{0, 2}},
		"treatment": {Values: []float64{40, 50}, Offsets: []int{0, 2}},
	} {
		got := s.Arms[arm].Calls[1]
		if !slices.Equal(got.Values, calls.Values) || !slices.Equal(got.Offsets, calls.Offsets) {
			t.Errorf("%s calls %+v, want %+v", arm, got, calls)
		}
	}
	if got := fmt.Sprint(s.Arms["control"].UserIDs, s.Arms["treatment"].UserIDs); got != "[u1] [u2]" {
		t.Errorf("users %s, want [u1] [u2]", got)
	}
}
