package results

import (
	"encoding/json"
	"testing"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/stats"
)

func rowAnalysis(t *testing.T, r Row) RowAnalysis {
	t.Helper()
	var an RowAnalysis
	if err := json.Unmarshal(r.Analysis, &an); err != nil {
		t.Fatal(err)
	}
	return an
}

// The headline follows the experiment's inference; the other mode is
// nested; a rank test stays fixed-horizon with a warning under sequential
// inference; crossover users above 1 % fail the health check while SRM
// still counts them.
func TestAnalyzeHeadlineFollowsInference(t *testing.T) {
	limits := plans.Get(plans.Enterprise)
	s := sample(300, 2)
	want, err := stats.Compare(stats.WelchT, s.Arms["a"].Values[0], s.Arms["b"].Values[0], stats.Options{})
	if err != nil || want.AlwaysValid == nil {
		t.Fatal(err)
	}
	for _, sequential := range []bool{true, false} {
		d := design("welch_t", limits)
		d.Sequential = sequential
		a, err := Analyze(d, s, testNow, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, an := a.Rows[0], rowAnalysis(t, a.Rows[0])
		head, other := want.AlwaysValid.PValue, want.PValue
		if !sequential {
			head, other = other, head
		}
		if r.Sequential != sequential || r.PValue != head || an.OtherMode == nil || an.OtherMode.PValue != other || len(an.Warnings) != 0 {
			t.Errorf("sequential=%v: row sequential %v p %v (want %v), other %+v (want p %v), warnings %v", sequential, r.Sequential, r.PValue, head, an.OtherMode, other, an.Warnings)
		}
	}
	d := design("mann_whitney", limits)
	d.Sequential = true
	a, err := Analyze(d, s, testNow, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, an := a.Rows[0], rowAnalysis(t, a.Rows[0])
	if r.Sequential || an.OtherMode != nil || len(an.Warnings) != 1 || an.Inference != "sequential" {
		t.Errorf("mann_whitney under sequential: %v %+v", r.Sequential, an)
	}

	s.Arms["a"].Crossover = 4 // 4 of 304 exposed: over 1 %
	a, err = Analyze(design("welch_t", limits), s, testNow, nil)
	if err != nil {
		t.Fatal(err)
	}
	an = rowAnalysis(t, a.Rows[0])
	if an.CrossoverHealth != HealthFail || an.CrossoverUsers["a"] != 4 || a.SRM.Observed["a"] != 304 {
		t.Errorf("crossover: %+v, SRM observed %v", an, a.SRM.Observed)
	}
}

func TestAnalyzeNonInferiorityDecision(t *testing.T) {
	d := design("welch_t", plans.Get(plans.Enterprise))
	d.Sequential = true
	d.Metrics[0].NonInferiorityMargin = &experiments.Margin{Value: 5, Type: "absolute", BadDirection: "decrease"}
	// b is 0.1 above a on values of SD about 5: no worse by 5.
	a, err := Analyze(d, sample(2000, 0.1), testNow, nil)
	if err != nil {
		t.Fatal(err)
	}
	ni := rowAnalysis(t, a.Rows[0]).NonInferiority
	if ni == nil || ni.Decision != stats.NonInferior || ni.PValue >= 0.05 {
		t.Errorf("non-inferiority %+v", ni)
	}
}
