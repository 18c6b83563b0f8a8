package results

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/stats"
)

// twoPhases is a 50/50 phase of a day and a 20/80 phase of a day after it.
func twoPhases() []experiments.Phase {
	t0 := testNow.Add(-48 * time.Hour)
	t1 := t0.Add(24 * time.Hour)
	return []experiments.Phase{
		{Number: 1, Start: t0, End: t1, Version: 1, Weights: map[string]float64{"a": 50, "b": 50}},
		{Number: 2, Start: t1, End: testNow, Version: 2, Weights: map[string]float64{"a": 20, "b": 80}},
	}
}

// phasedSample has n1 users in phase 1 (split 50/50) and n2 in phase 2
// (split 20/80), first exposed evenly over each phase; the outcome has no
// treatment effect but rises by drift from phase 1 to phase 2.
func phasedSample(phases []experiments.Phase, n1, n2 int, drift float64) Sample {
	r := rand.New(rand.NewPCG(11, 12))
	s := Sample{Arms: map[string]*Arm{"a": {Values: [][]float64{nil, nil}}, "b": {Values: [][]float64{nil, nil}}}}
	for k, n := range []int{n1, n2} {
		p := phases[k]
		share := p.Weights["b"] / (p.Weights["a"] + p.Weights["b"])
		for i := range n {
			name := "a"
			if r.Float64() < share {
				name = "b"
			}
			arm := s.Arms[name]
			at := p.Start.Add(time.Duration(float64(p.End.Sub(p.Start)) * (float64(i) + 0.5) / float64(n)))
			v := 10 + drift*float64(k) + r.NormFloat64()
			arm.UserIDs = append(arm.UserIDs, fmt.Sprintf("%s-%d-%d", name, k, i))
			arm.First = append(arm.First, at)
			arm.Values[0] = append(arm.Values[0], v)
			arm.Values[1] = append(arm.Values[1], v)
		}
	}
	return s
}

// phasedDesign has a welch_t metric and a mann_whitney one over the
// same values, 20/80 at the window's end.
func phasedDesign(phases []experiments.Phase) Design {
	d := design("welch_t", plans.Get(plans.Enterprise))
	other := d.Metrics[0]
	other.Name, other.MethodDefault = "rank", "mann_whitney"
	d.Metrics = append(d.Metrics, other)
	d.Allocation = []bucketing.Slice{{Variant: "a", Weight: 20}, {Variant: "b", Weight: 80}}
	d.Sequential, d.Phases = true, phases
	d.Window = Window{Start: phases[0].Start, End: phases[len(phases)-1].End, Days: 2}
	return d
}

func TestStratifiedEffectWhenWeightsChanged(t *testing.T) {
	phases := twoPhases()
	s := phasedSample(phases, 2000, 2000, 1)
	d := phasedDesign(phases)
	a, err := Analyze(d, s, testNow, nil)
	if err != nil {
		t.Fatal(err)
	}
	welch, rank := a.Rows[0], a.Rows[1]
	var an RowAnalysis
	if err := json.Unmarshal(welch.Analysis, &an); err != nil {
		t.Fatal(err)
	}
	// The same strata built here from the sample.
	strata := make([]stats.Stratum, 2)
	for name, arm := range s.Arms {
		for u, at := range arm.First {
			k := experiments.PhaseAt(phases, at)
			if name == "a" {
				strata[k].Control = append(strata[k].Control, arm.Values[0][u])
			} else {
				strata[k].Treatment = append(strata[k].Treatment, arm.Values[0][u])
			}
		}
	}
	want, err := stats.CompareStratified(stats.WelchT, strata, d.options(d.Metrics[0], "b"))
	if err != nil {
		t.Fatal(err)
	}
	if an.StratifiedPhases != 2 || welch.Effect != want.Effect || !welch.Sequential ||
		welch.PValue != want.AlwaysValid.PValue || welch.CILow != want.AlwaysValid.CILow || welch.CIHigh != want.AlwaysValid.CIHigh {
		t.Errorf("welch_t row: stratified over %d phases, effect %v, sequential %v, p %v [%v, %v]; want 2, %v, true, the always-valid %+v",
			an.StratifiedPhases, welch.Effect, welch.Sequential, welch.PValue, welch.CILow, welch.CIHigh, want.Effect, want.AlwaysValid)
	}
	if welch.CILow > 0 || welch.CIHigh < 0 {
		t.Errorf("no true effect: the stratified interval [%v, %v] must hold 0", welch.CILow, welch.CIHigh)
	}
	// Pooled, treatment has more of the later, higher users: biased.
	pooled, err := stats.Compare(stats.WelchT, s.Arms["a"].Values[0], s.Arms["b"].Values[0], stats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if pooled.CILow <= 0 {
		t.Errorf("the pooled test should show the drift as an effect (Simpson's paradox): %v [%v, %v]", pooled.Effect, pooled.CILow, pooled.CIHigh)
	}
	var ran RowAnalysis
	if err := json.Unmarshal(rank.Analysis, &ran); err != nil {
		t.Fatal(err)
	}
	if ran.StratifiedPhases != 0 || !strings.Contains(strings.Join(ran.Warnings, " "), "pools the users of every phase") {
		t.Errorf("mann_whitney row: stratified %d, warnings %q; want pooled with a warning", ran.StratifiedPhases, ran.Warnings)
	}
}

// With one phase (or phases of which only one has users), the rows are
// those of the pooled analysis, byte for byte.
func TestOnePhaseResultsAreUnchanged(t *testing.T) {
	phases := twoPhases()
	onlyFirst := phasedSample(phases, 3000, 0, 1)
	for _, c := range []struct {
		name   string
		phases []experiments.Phase
	}{
		{"one phase", []experiments.Phase{{Number: 1, Start: phases[0].Start, End: testNow, Version: 1, Weights: map[string]float64{"a": 20, "b": 80}}}},
		{"users in one phase of two", phases},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := phasedDesign(c.phases)
			got, err := Analyze(d, onlyFirst, testNow, nil)
			if err != nil {
				t.Fatal(err)
			}
			d.Phases = nil
			want, err := Analyze(d, onlyFirst, testNow, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.phases) > 1 {
				// Only the SRM differs: phase 1's own weights (50/50), not
				// the final ones, are what these users were assigned by.
				if got.SRM.SRMPhases == nil || got.SRM.PValue == want.SRM.PValue || got.SRM.Phases[0].Weights["a"] != 50 {
					t.Errorf("SRM of users all in phase 1: %+v; want phase 1's test", got.SRM)
				}
				for i := range want.Rows {
					if got.Rows[i].SRMP != got.SRM.PValue {
						t.Errorf("row %d: srm_p %v; want the phases' %v", i, got.Rows[i].SRMP, got.SRM.PValue)
					}
					want.Rows[i].SRMP = got.Rows[i].SRMP
				}
			}
			g, _ := json.Marshal(got.Rows)
			w, _ := json.Marshal(want.Rows)
			if string(g) != string(w) {
				t.Errorf("rows differ from the pooled analysis:\n got %s\nwant %s", g, w)
			}
			if len(c.phases) == 1 {
				g, _ := json.Marshal(got.SRM)
				w, _ := json.Marshal(want.SRM)
				if string(g) != string(w) || got.SRM.SRMPhases != nil {
					t.Errorf("SRM differs with one phase:\n got %s\nwant %s", g, w)
				}
			}
		})
	}
}

func TestSRMPerPhase(t *testing.T) {
	phases := twoPhases()
	// Exact counts: 50/50 then 20/80, 10,010 and 15,000 users.
	build := func(counts [2][2]int) Sample {
		s := Sample{Arms: map[string]*Arm{"a": {Values: [][]float64{nil, nil}}, "b": {Values: [][]float64{nil, nil}}}}
		for k, p := range phases {
			for ai, name := range []string{"a", "b"} {
				arm := s.Arms[name]
				for i := range counts[k][ai] {
					arm.UserIDs = append(arm.UserIDs, fmt.Sprintf("%s-%d-%d", name, k, i))
					arm.First = append(arm.First, p.Start.Add(PhaseSettle+time.Duration(i)*time.Second))
					arm.Values[0], arm.Values[1] = append(arm.Values[0], 1), append(arm.Values[1], 1)
				}
			}
		}
		return s
	}
	d := phasedDesign(phases)
	for _, c := range []struct {
		name   string
		counts [2][2]int
		gate   string
		failed []int
	}{
		{"weights in force", [2][2]int{{5000, 5010}, {3010, 11990}}, stats.GatePass, []int{}},
		{"10% of a's exposures lost in phase 1", [2][2]int{{4500, 5010}, {3010, 11990}}, stats.GateFail, []int{1}},
		{"10% of b's exposures lost in phase 2", [2][2]int{{5000, 5010}, {3010, 10791}}, stats.GateFail, []int{2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := Analyze(d, build(c.counts), testNow, nil)
			if err != nil {
				t.Fatal(err)
			}
			srm := a.SRM
			if srm.SRMPhases == nil || len(srm.Phases) != 2 {
				t.Fatalf("srm %+v: want two phases", srm)
			}
			if srm.Gate != c.gate || fmt.Sprint(srm.FailedPhases) != fmt.Sprint(c.failed) || a.Rows[0].SRMP != srm.PValue {
				t.Errorf("gate %s, failed %v, row srm_p %v (summary %v); want %s, %v", srm.Gate, srm.FailedPhases, a.Rows[0].SRMP, srm.PValue, c.gate, c.failed)
			}
			min := math.Min(srm.Phases[0].PValue, srm.Phases[1].PValue)
			if want := math.Min(1, 2*min); srm.PValue != want {
				t.Errorf("srm_p %v; want Bonferroni over 2 phases, %v", srm.PValue, want)
			}
			for k, p := range srm.Phases {
				if p.Observed["a"] != int64(c.counts[k][0]) || p.Weights["b"] != phases[k].Weights["b"] {
					t.Errorf("phase %d: %+v", k+1, p)
				}
			}
		})
	}
	// The pooled test against the final weights fails on the clean ramp.
	r, err := stats.SRM([]int64{8010, 17000}, []float64{20, 80})
	if err != nil || r.Gate != stats.GateFail {
		t.Errorf("pooled SRM of the clean ramp: %+v, %v; want fail (what the per-phase test fixes)", r, err)
	}
}

// Users first exposed while clients still pick up a new allocation are
// left out of the new phase's test.
func TestSRMLeavesTheSettlingMinutesOut(t *testing.T) {
	phases := twoPhases()
	d := phasedDesign(phases)
	s := phasedSample(phases, 400, 400, 0)
	settling := int64(300)
	for _, arm := range s.Arms {
		for _, at := range arm.First {
			if !at.Before(phases[1].Start) && at.Before(phases[1].Start.Add(PhaseSettle)) {
				settling++
			}
		}
	}
	// 300 users at 50/50 in the first 30 seconds of phase 2.
	for i := range 300 {
		name := []string{"a", "b"}[i%2]
		arm := s.Arms[name]
		arm.UserIDs = append(arm.UserIDs, fmt.Sprintf("settling-%d", i))
		arm.First = append(arm.First, phases[1].Start.Add(time.Duration(i)*100*time.Millisecond))
		arm.Values[0], arm.Values[1] = append(arm.Values[0], 1), append(arm.Values[1], 1)
	}
	a, err := Analyze(d, s, testNow, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := a.SRM.Phases[1]; p.Settling != settling || a.SRM.Gate != stats.GatePass {
		t.Errorf("phase 2: %+v, gate %s; want %d settling users left out and a pass", p, a.SRM.Gate, settling)
	}
}
