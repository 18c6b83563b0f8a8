package metrics

import (
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/vocab"
)

// Built-in metric names. An experiment may list one of these with no
// source; the catalogue supplies it.
const (
	LatencyMs          = "latency_ms"
	LatencyP95Ms       = "latency_p95_ms"
	ErrorRate          = "error_rate"
	TotalTokens        = "total_tokens"
	CostUSD            = "cost_usd"
	TimeToFirstTokenMs = "time_to_first_token_ms"
	Conversion         = "conversion"
	Revenue            = "revenue"
	CostPerCallUSD     = "cost_per_call_usd"
	TokensPerCall      = "tokens_per_call"
	ErrorRatePerCall   = "error_rate_per_call"
	ThumbsUpRate       = "thumbs_up_rate"
	// ThumbsUp is the score name thumbs_up_rate reads (a browser's
	// thumbs-up: 1, thumbs-down: 0).
	ThumbsUp = "thumbs_up"
)

// catalogue is the built-in definitions, in display order. latency_p95_ms
// is the true p95 of per-call latency (a quantile metric with a
// user-clustered interval); the per-call ratios divide by the user's
// number of model calls.
var catalogue = []experiments.Metric{
	builtin(LatencyMs, vocab.Mean, "guardrail", stats.WelchT, modelCall("latency_ms"), down),
	quantile(LatencyP95Ms, 0.95, modelCall("latency_ms")),
	builtin(ErrorRate, vocab.Mean, "guardrail", stats.WelchT, modelCall("error"), down),
	builtin(TotalTokens, vocab.Mean, "guardrail", stats.WelchT, modelCall("total_tokens"), down),
	builtin(CostUSD, vocab.Sum, "guardrail", stats.WelchT, modelCall("cost_usd"), down),
	builtin(TimeToFirstTokenMs, vocab.Mean, "guardrail", stats.WelchT, modelCall("time_to_first_token_ms"), down),
	builtin(Conversion, vocab.Proportion, "primary", stats.ZTest, business(Conversion), up),
	builtin(Revenue, vocab.Sum, "secondary", stats.WelchT, business(Revenue), up),
	ratio(CostPerCallUSD, modelCall("cost_usd")),
	ratio(TokensPerCall, modelCall("total_tokens")),
	ratio(ErrorRatePerCall, modelCall("error")),
	// The share of a user's rated calls rated up, over users who rated
	// one: a mean over scored calls, so welch_t (docs/quality.md).
	builtin(ThumbsUpRate, vocab.Proportion, "primary", stats.WelchT, humanScore(ThumbsUp), up),
}

// Goals of the built-ins: latency, tokens, cost and errors should go down,
// conversion, revenue and thumbs-up up. Score metrics have none: a score
// may be good (helpfulness) or bad (toxicity).
const (
	up   = experiments.GoalIncrease
	down = experiments.GoalDecrease
)

func quantile(name string, p float64, src experiments.MetricSource) experiments.Metric {
	m := builtin(name, vocab.Quantile, "guardrail", "", src, down)
	m.Quantile = &p
	return m
}

// ratio is a per-call ratio: the numerator's sum over the user's count of
// model calls.
func ratio(name string, num experiments.MetricSource) experiments.Metric {
	m := builtin(name, vocab.Ratio, "guardrail", "", num, down)
	m.Denominator = &experiments.MetricSource{EventType: vocab.TypeModelCall}
	return m
}

// builtin is a catalogue entry; a kind with its own test (vocab.KindSpec.
// Test) takes it, method is the test of the others.
func builtin(name string, kind vocab.Kind, category string, method stats.Method, src experiments.MetricSource, goal string) experiments.Metric {
	shared := false
	test := string(method)
	if spec, _ := vocab.Spec(kind); spec.Test != "" {
		test = spec.Test
	}
	return experiments.Metric{Name: name, Kind: kind, Category: category, MethodDefault: test,
		MetricVersion: 1, SharedOrgWide: &shared, Source: &src, Goal: goal}
}

func modelCall(field string) experiments.MetricSource {
	return experiments.MetricSource{EventType: vocab.TypeModelCall, Field: field}
}

func business(name string) experiments.MetricSource {
	return experiments.MetricSource{EventType: vocab.TypeBusinessEvent, BusinessMetric: name}
}

func humanScore(name string) experiments.MetricSource {
	return experiments.MetricSource{EventType: vocab.TypeScore, Score: name, ScoreSource: scores.SourceHuman}
}

// Builtins returns a copy of the built-in catalogue.
func Builtins() []experiments.Metric {
	out := make([]experiments.Metric, len(catalogue))
	for i, m := range catalogue {
		out[i] = clone(m)
	}
	return out
}

// Builtin returns the built-in metric of that name.
func Builtin(name string) (experiments.Metric, bool) {
	for _, m := range catalogue {
		if m.Name == name {
			return clone(m), true
		}
	}
	return experiments.Metric{}, false
}

// clone copies the pointer fields so callers cannot edit the catalogue.
func clone(m experiments.Metric) experiments.Metric {
	src, shared := *m.Source, *m.SharedOrgWide
	m.Source, m.SharedOrgWide = &src, &shared
	if m.Quantile != nil {
		q := *m.Quantile
		m.Quantile = &q
	}
	if m.Denominator != nil {
		d := *m.Denominator
		m.Denominator = &d
	}
	return m
}

// FillGoals gives each metric of cfg that names a built-in (no source, not
// shared) and sets no goal the built-in's, so that a guardrail on it may
// omit bad_direction and the stored config says which way is better.
func FillGoals(cfg *experiments.Config) {
	for i := range cfg.Metrics {
		m := &cfg.Metrics[i]
		if m.Goal != "" || m.Source != nil || m.SharedOrgWide != nil && *m.SharedOrgWide {
			continue
		}
		if b, ok := Builtin(m.Name); ok {
			m.Goal = b.Goal
		}
	}
}
