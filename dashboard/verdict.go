package dashboard

import (
	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/verdict"
)

// verdictWords are the recommendations as the results page says them.
var verdictWords = map[string]string{
	verdict.Ship:        "ship",
	verdict.KeepRunning: "keep running",
	verdict.Stop:        "stop",
}

// reasonWords say each reason code in plain words; the metric and arm
// follow.
var reasonWords = map[string]string{
	verdict.ReasonPrimaryBetter:       "better on its primary metric",
	verdict.ReasonNonInferior:         "not worse than control beyond the margin",
	verdict.ReasonBetter:              "also better on",
	verdict.ReasonSRM:                 "sample ratio mismatch: the arms did not get the share of users their weights say; find the cause before reading any effect",
	verdict.ReasonGuardrailBreached:   "guardrail breached",
	verdict.ReasonGuardrailWorse:      "worse on a guardrail metric",
	verdict.ReasonGuardrailNoData:     "not enough data yet for the guardrail",
	verdict.ReasonInferior:            "worse than control beyond the non-inferiority margin",
	verdict.ReasonPrimaryWorse:        "worse on its primary metric",
	verdict.ReasonPrimaryInconclusive: "primary metric not decided yet",
	verdict.ReasonGoalNotSet:          "direction not set (edit the metric's goal: increase or decrease)",
	verdict.ReasonNoPrimary:           "the experiment has no primary metric",
	verdict.ReasonPreliminary:         "too little data yet (fewer than 7 days or 100 users per arm)",
	verdict.ReasonCrossover:           "more than 1% of the arm's users saw several variants",
	verdict.ReasonMDEOutOfReach:       "the minimum detectable effect cannot be reached within the planned duration",
	verdict.ReasonNoData:              "no comparison computed yet",
}

func init() {
	funcs["verdictWord"] = func(r string) string { return verdictWords[r] }
	funcs["reasonText"] = func(r verdict.Reason) string {
		s := reasonWords[r.Code]
		if s == "" {
			s = r.Code
		}
		if r.Metric != "" {
			s += ": " + r.Metric
		}
		if r.Variant != "" {
			s += " (" + r.Variant + ")"
		}
		return s
	}
}

// share is a variant's computed share of traffic: weights are relative,
// so 25/25/25 gives each a third.
type share struct{ Variant, Share string }

func shares(alloc []bucketing.Slice) []share {
	total := 0.0
	for _, s := range alloc {
		total += s.Weight
	}
	out := make([]share, len(alloc))
	for i, s := range alloc {
		out[i] = share{Variant: s.Variant, Share: "–"}
		if total > 0 {
			out[i].Share = fmtNum(100*s.Weight/total) + "%"
		}
	}
	return out
}
