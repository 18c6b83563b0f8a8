package verdict_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/results"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/verdict"
)

func ptr(v float64) *float64 { return &v }

// row is a comparison of metric for variant with a relative interval
// [lo, hi] around est, FDR p, and enough data.
func row(metric, variant string, est, lo, hi, fdr float64) results.Row {
	return results.Row{Metric: metric, Variant: variant, ControlVariant: "control", Effect: est, CILow: lo, CIHigh: hi,
		RelLift: ptr(est), RelCILow: ptr(lo), RelCIHigh: ptr(hi), PValue: fdr, PValueFDR: fdr, NControl: 2000, NTreatment: 2000, WindowDays: 14}
}

func withNI(r results.Row, decision string) results.Row {
	a, _ := json.Marshal(results.RowAnalysis{NonInferiority: &results.NonInferiorityView{Margin: 0.02, Type: "relative", Decision: decision}})
	r.Analysis = a
	return r
}

// withRate gives a proportion row a control rate (its distribution).
func withRate(r results.Row, rate float64) results.Row {
	r.Kind = "proportion"
	r.Distribution = []byte(fmt.Sprintf(`{"edges":[0,1],"arms":{"control":{"n":%d,"mean":%g,"sd":%g}}}`, r.NControl, rate, math.Sqrt(rate*(1-rate))))
	return r
}

func metric(name, category, goal string) experiments.Metric {
	return experiments.Metric{Name: name, Category: category, Goal: goal}
}

func guarded(name, goal string, maxChange float64, action string) experiments.Metric {
	m := metric(name, "guardrail", goal)
	m.Guardrail = &experiments.Guardrail{BadDirection: experiments.Opposite(goal), MaxChange: maxChange, Relative: true, Action: action}
	return m
}

func input(ms []experiments.Metric, rows ...results.Row) verdict.Input {
	return verdict.Input{Control: "control", Variants: []string{"b"}, Metrics: ms, Rows: rows, SRMGate: stats.GatePass, WindowDays: 14}
}

func hasReason(v verdict.Verdict, code, metric string) bool {
	for _, r := range v.Reasons {
		if r.Code == code && (metric == "" || r.Metric == metric) {
			return true
		}
	}
	return false
}

func TestVerdictOnConstructedRuns(t *testing.T) {
	conversion := metric("conversion", "primary", experiments.GoalIncrease)
	latency := guarded("latency_ms", experiments.GoalDecrease, 0.10, experiments.GuardrailStop)
	cases := []struct {
		name           string
		in             verdict.Input
		recommendation string
		variant        string
		reason, metric string
		check          func(t *testing.T, v verdict.Verdict)
	}{
		{
			name: "a clear win ships the arm",
			in: input([]experiments.Metric{conversion, latency},
				row("conversion", "b", 0.12, 0.06, 0.18, 0.001), row("latency_ms", "b", 0.01, -0.03, 0.05, 0.6)),
			recommendation: verdict.Ship, variant: "b", reason: verdict.ReasonPrimaryBetter, metric: "conversion",
			check: func(t *testing.T, v verdict.Verdict) {
				a := v.Arms[0]
				if !a.Shippable || a.Primary[0].Outcome != verdict.Better || a.Guardrails[0].Status != verdict.GuardrailPass || a.SRM != stats.GatePass {
					t.Errorf("arm: %+v", a)
				}
			},
		},
		{
			name: "a breached guardrail stops, naming it",
			in: input([]experiments.Metric{conversion, latency},
				row("conversion", "b", 0.12, 0.06, 0.18, 0.001), row("latency_ms", "b", 1.33, 1.1, 1.5, 0.001)),
			recommendation: verdict.Stop, reason: verdict.ReasonGuardrailBreached, metric: "latency_ms",
			check: func(t *testing.T, v verdict.Verdict) {
				if v.Arms[0].Guardrails[0].Status != verdict.GuardrailBreach || v.Arms[0].Shippable {
					t.Errorf("arm: %+v", v.Arms[0])
				}
			},
		},
		{
			name: "a failed SRM stops whatever the effects",
			in: func() verdict.Input {
				in := input([]experiments.Metric{conversion}, row("conversion", "b", 0.12, 0.06, 0.18, 0.001))
				in.SRMGate = stats.GateFail
				return in
			}(),
			recommendation: verdict.Stop, reason: verdict.ReasonSRM,
			check: func(t *testing.T, v verdict.Verdict) {
				if v.Arms[0].SRM != stats.GateFail || v.Reasons[0].Code != verdict.ReasonSRM {
					t.Errorf("srm first: %+v", v)
				}
			},
		},
		{
			name: "a cheaper arm non-inferior on quality ships",
			in: func() verdict.Input {
				quality := metric("helpfulness", "primary", experiments.GoalIncrease)
				quality.NonInferiorityMargin = &experiments.Margin{Value: 0.02, Type: "relative", BadDirection: "decrease"}
				cost := metric("cost_usd", "guardrail", experiments.GoalDecrease)
				return input([]experiments.Metric{quality, cost},
					withNI(row("helpfulness", "b", -0.003, -0.015, 0.009, 0.6), stats.NonInferior), row("cost_usd", "b", -0.4, -0.45, -0.35, 0.001))
			}(),
			recommendation: verdict.Ship, variant: "b", reason: verdict.ReasonNonInferior, metric: "helpfulness",
			check: func(t *testing.T, v verdict.Verdict) {
				if !hasReason(v, verdict.ReasonBetter, "cost_usd") || v.Arms[0].NonInferiority[0].Decision != stats.NonInferior {
					t.Errorf("cheaper arm: %+v", v)
				}
			},
		},
		{
			name: "too little data keeps running, with the days to the MDE",
			in: func() verdict.Input {
				c := conversion
				c.MDE = ptr(0.05)
				r := withRate(row("conversion", "b", 0.08, -0.02, 0.18, 0.12), 0.2)
				r.Preliminary, r.WindowDays, r.NControl, r.NTreatment = true, 3, 600, 600
				in := input([]experiments.Metric{c}, r)
				in.WindowDays = 3
				return in
			}(),
			recommendation: verdict.KeepRunning, reason: verdict.ReasonPreliminary,
			check: func(t *testing.T, v verdict.Verdict) {
				// A rate of 0.2 and an MDE of 5 % relative (0.01 absolute):
				// R's power.prop.test(p1 = 0.2, p2 = 0.21, power = 0.8) needs
				// 25,580 users per arm; 1,200 came in 3 days (400 a day), so
				// (51,160 - 1,200) / 400 = 124.9 more days, rounded up.
				if v.DaysToMDE == nil || *v.DaysToMDE != 125 || v.Arms[0].DataHealth != "preliminary" {
					t.Errorf("days_to_mde %v, arm %+v", v.DaysToMDE, v.Arms[0])
				}
			},
		},
		{
			name: "an MDE out of reach within the planned duration stops",
			in: func() verdict.Input {
				c := conversion
				c.MDE = ptr(0.01)
				in := input([]experiments.Metric{c}, withRate(row("conversion", "b", 0.01, -0.02, 0.04, 0.5), 0.2))
				in.PlannedDays = 28
				return in
			}(),
			recommendation: verdict.Stop, reason: verdict.ReasonMDEOutOfReach, metric: "conversion",
		},
		{
			name: "a primary metric without a goal cannot ship, and says so",
			in: input([]experiments.Metric{metric("toxicity", "primary", "")},
				row("toxicity", "b", -0.2, -0.3, -0.1, 0.001)),
			recommendation: verdict.KeepRunning, reason: verdict.ReasonGoalNotSet, metric: "toxicity",
			check: func(t *testing.T, v verdict.Verdict) {
				if p := v.Arms[0].Primary[0]; p.Outcome != verdict.Lower || p.Goal != "" || v.Arms[0].Shippable {
					t.Errorf("neutral reading: %+v", v.Arms[0])
				}
			},
		},
		{
			name: "every arm worse on the primary stops",
			in: input([]experiments.Metric{conversion},
				row("conversion", "b", -0.1, -0.15, -0.05, 0.001)),
			recommendation: verdict.Stop, reason: verdict.ReasonPrimaryWorse, metric: "conversion",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := verdict.Decide(c.in)
			if v.Recommendation != c.recommendation || v.Variant != c.variant {
				t.Fatalf("got %s %q, want %s %q; reasons %+v", v.Recommendation, v.Variant, c.recommendation, c.variant, v.Reasons)
			}
			if !hasReason(v, c.reason, c.metric) {
				t.Fatalf("reasons %+v lack %s (%s)", v.Reasons, c.reason, c.metric)
			}
			if c.check != nil {
				c.check(t, v)
			}
		})
	}
}

// The badge follows the interval the row shows: an interval holding 0 is
// inconclusive whatever the p-value, and one excluding 0 still needs the
// FDR-adjusted p.
func TestJudgeFollowsTheShownInterval(t *testing.T) {
	r := row("conversion", "b", 0.495, -0.037, 1.027, 0.01) // the issue's +49.5 % [-3.7 %, +102.7 %]
	if j := verdict.Judge(r, experiments.GoalIncrease); j.Outcome != verdict.Inconclusive || j.Scale != verdict.Relative {
		t.Fatalf("interval holding 0: %+v", j)
	}
	r = row("latency_ms", "b", 1.33, 1.1, 1.5, 0.001)
	if j := verdict.Judge(r, experiments.GoalDecrease); j.Outcome != verdict.Worse {
		t.Fatalf("latency up: %+v", j)
	}
	if j := verdict.Judge(r, ""); j.Outcome != verdict.Higher {
		t.Fatalf("no goal: %+v", j)
	}
	r = row("conversion", "b", 0.1, 0.01, 0.2, 0.2)
	if j := verdict.Judge(r, experiments.GoalIncrease); j.Outcome != verdict.Inconclusive || !j.HeldBackByFDR {
		t.Fatalf("held back by FDR: %+v", j)
	}
	abs := results.Row{Metric: "revenue", Variant: "b", Effect: 2, CILow: 1, CIHigh: 3, PValueFDR: 0.001}
	if j := verdict.Judge(abs, experiments.GoalIncrease); j.Outcome != verdict.Better || j.Scale != verdict.Absolute {
		t.Fatalf("absolute fallback: %+v", j)
	}
	if j := verdict.Judge(results.Row{Undefined: "no users"}, experiments.GoalIncrease); j.Outcome != verdict.NoTest {
		t.Fatalf("undefined: %+v", j)
	}
}

// A primary metric the run has no row for is a no_test call without an
// interval, so without a scale (the results answer's schema allows only
// relative or absolute when one is given).
func TestPrimaryWithoutARowHasNoScale(t *testing.T) {
	conversion := metric("conversion", "primary", experiments.GoalIncrease)
	other := metric("revenue", "secondary", experiments.GoalIncrease)
	v := verdict.Decide(input([]experiments.Metric{conversion, other}, row("revenue", "b", 0.1, 0.05, 0.15, 0.001)))
	if len(v.Arms) != 1 || len(v.Arms[0].Primary) != 1 || v.Arms[0].Primary[0].Outcome != verdict.NoTest {
		t.Fatalf("arms: %+v", v.Arms)
	}
	b, _ := json.Marshal(v.Arms[0].Primary[0])
	if strings.Contains(string(b), `"scale"`) {
		t.Fatalf("a call without a row has a scale: %s", b)
	}
	if v.Recommendation == verdict.Ship {
		t.Fatalf("shipped without a primary row: %+v", v)
	}
}
