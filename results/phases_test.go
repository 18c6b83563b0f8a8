package results_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/stats"
)

// A 50 -> 20/80 ramp through the real aggregator (day rollups and the
// open day, on SQLite or PostgreSQL): users assigned by the weights in
// force pass the sample-ratio check, which tests each phase against its
// own weights, and a 10 % loss of one arm's exposures in either phase
// fails it, naming the phase. The pooled test against the final weights
// would fail the clean ramp.
func TestSRMOnARampThroughTheAggregator(t *testing.T) {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	now := time.Now().UTC().Truncate(time.Second)
	start, change := now.Add(-72*time.Hour), now.Add(-30*time.Hour)
	half := []bucketing.Slice{{Variant: resultstest.Arms[0], Weight: 50}, {Variant: resultstest.Arms[1], Weight: 50}}
	ramp := []bucketing.Slice{{Variant: resultstest.Arms[0], Weight: 20}, {Variant: resultstest.Arms[1], Weight: 80}}
	tenth := func(phase int, arm string) func(int, string, int) bool {
		n := 0
		return func(k int, variant string, _ int) bool {
			if k != phase || variant != arm {
				return false
			}
			n++
			return n%10 == 0
		}
	}
	for i, c := range []struct {
		name   string
		drop   func(int, string, int) bool
		gate   string
		failed []int
	}{
		{"weights in force", nil, stats.GatePass, []int{}},
		{"10% of control's exposures lost in phase 1", tenth(0, resultstest.Arms[0]), stats.GateFail, []int{1}},
		{"10% of treatment's exposures lost in phase 2", tenth(1, resultstest.Arms[1]), stats.GateFail, []int{2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			exp := resultstest.Experiment(t, db, org.ID, resultstest.Config(fmt.Sprintf("ramp-%d", i)))
			resultstest.Ramp(t, db, org.ID, exp, start, change, ramp)
			resultstest.Insert(t, db, resultstest.PhasedExposures(org.ID, exp.ID, 30, []time.Time{start, change, now.Add(-time.Minute)},
				[]int{10_000, 15_000}, [][]bucketing.Slice{half, ramp}, c.drop))
			p, err := results.LoadDesign(t.Context(), db, org.ID, exp.ID, now)
			if err != nil || p.Skip != "" {
				t.Fatalf("design: %+v, %v", p, err)
			}
			d := p.Design
			if len(d.Phases) != 2 || d.Phases[1].Number != 2 || !d.Phases[1].Start.Equal(change) || d.Phases[0].Weights[resultstest.Arms[1]] != 50 || d.Phases[1].Weights[resultstest.Arms[1]] != 80 {
				t.Fatalf("phases %+v; want 50/50 from %s, 20/80 from %s", d.Phases, start, change)
			}
			s, _, err := results.SQL{DB: db}.Aggregate(t.Context(), org.ID, exp.ID, d.Window, d.Arms(), d.Metrics, time.Now(), nil)
			if err != nil {
				t.Fatal(err)
			}
			a, err := results.Analyze(d, s, now, nil)
			if err != nil {
				t.Fatal(err)
			}
			srm := a.SRM
			if srm.SRMPhases == nil || len(srm.Phases) != 2 {
				t.Fatalf("srm %+v; want two phases", srm)
			}
			if srm.Gate != c.gate || fmt.Sprint(srm.FailedPhases) != fmt.Sprint(c.failed) || a.Rows[0].SRMP != srm.PValue {
				t.Errorf("gate %s (p %v), failed phases %v, row srm_p %v; want %s, %v; phases %+v", srm.Gate, srm.PValue, srm.FailedPhases, a.Rows[0].SRMP, c.gate, c.failed, srm.Phases)
			}
			var users int64
			for _, ph := range srm.Phases {
				for _, n := range ph.Observed {
					users += n
				}
				users += ph.Settling
			}
			if want := srm.Observed[resultstest.Arms[0]] + srm.Observed[resultstest.Arms[1]]; users != want {
				t.Errorf("the phases hold %d users; want every exposed user once, %d", users, want)
			}
			if c.drop == nil {
				pooled, err := stats.SRM([]int64{srm.Observed[resultstest.Arms[0]], srm.Observed[resultstest.Arms[1]]}, []float64{20, 80})
				if err != nil || pooled.Gate != stats.GateFail {
					t.Errorf("the pooled test against 20/80: %+v, %v; want it to fail (so this test can)", pooled, err)
				}
			}
		})
	}
}
