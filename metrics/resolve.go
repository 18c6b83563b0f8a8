package metrics

import (
	"context"
	"errors"
	"fmt"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/vocab"
)

// Where a resolved metric's source came from.
const (
	OriginExperiment = "experiment" // the experiment config gave the source
	OriginBuiltin    = "builtin"    // the catalogue supplied it
	OriginShared     = "shared"     // an org-wide shared definition
)

// Resolved is a metric ready for analysis: Source is set, unless Problem
// says why the metric cannot be computed.
type Resolved struct {
	experiments.Metric
	Origin  string
	Problem string
}

// Resolve completes the metrics of an experiment config:
//   - shared_org_wide: the org's shared definition at the listed
//     metric_version supplies kind, method and source; the experiment
//     keeps its category (the metric's role in this experiment);
//   - else a metric with a source is used as written;
//   - else a built-in name gets the catalogue's source.
//
// A metric that cannot be resolved is returned with Problem set rather
// than failing the run: the other metrics still get results.
func Resolve(ctx context.Context, shared Store, orgID string, ms []experiments.Metric) ([]Resolved, error) {
	out := make([]Resolved, 0, len(ms))
	for _, m := range ms {
		r, err := resolveOne(ctx, shared, orgID, m)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func resolveOne(ctx context.Context, shared Store, orgID string, m experiments.Metric) (Resolved, error) {
	r, err := resolveSource(ctx, shared, orgID, m)
	if err == nil && r.Problem == "" {
		r.Problem = incomplete(r.Metric)
	}
	return r, err
}

// incomplete says what a resolved metric still lacks of what its kind
// needs (a quantile, a denominator).
func incomplete(m experiments.Metric) string {
	spec, _ := vocab.Spec(m.Kind)
	switch {
	case spec.NeedsQuantile && m.Quantile == nil:
		return fmt.Sprintf("%s metric %q has no quantile", m.Kind, m.Name)
	case spec.NeedsDenominator && m.Denominator == nil:
		return fmt.Sprintf("%s metric %q has no denominator", m.Kind, m.Name)
	case m.Source != nil && m.Source.EventType == vocab.TypeScore && !spec.Scores:
		// A built-in score metric listed with another kind.
		return fmt.Sprintf("%s metric %q reads %s values, which only kind %s can", m.Kind, m.Name, vocab.TypeScore, vocab.JoinOr(vocab.ScoreKinds(), "%s"))
	case m.Source != nil && m.Source.EventType == vocab.TypeScore && m.MethodDefault == string(stats.ZTest):
		return fmt.Sprintf("metric %q reads %s values, whose per-user value is a mean over scored calls, not 0 or 1: %s does not apply (use %s)", m.Name, vocab.TypeScore, stats.ZTest, stats.WelchT)
	}
	return ""
}

func resolveSource(ctx context.Context, shared Store, orgID string, m experiments.Metric) (Resolved, error) {
	switch {
	case m.SharedOrgWide != nil && *m.SharedOrgWide:
		def, err := shared.Get(ctx, orgID, m.Name, m.MetricVersion)
		if errors.Is(err, ErrNotFound) {
			return Resolved{Metric: m, Origin: OriginShared, Problem: fmt.Sprintf("shared metric %q version %d does not exist", m.Name, m.MetricVersion)}, nil
		}
		if err != nil {
			return Resolved{}, err
		}
		// The experiment keeps its role for the metric and its own analysis
		// choices (CUPED, margin); the definition says what is measured.
		def.Category, def.CUPED, def.NonInferiorityMargin, def.Guardrail, def.MDE = m.Category, m.CUPED, m.NonInferiorityMargin, m.Guardrail, m.MDE
		if m.Goal != "" { // else the definition's
			def.Goal = m.Goal
		}
		return Resolved{Metric: def, Origin: OriginShared}, nil
	case m.Source != nil:
		return Resolved{Metric: m, Origin: OriginExperiment}, nil
	}
	if b, ok := Builtin(m.Name); ok {
		m.Source = b.Source
		if m.Goal == "" {
			m.Goal = b.Goal
		}
		if m.Kind == b.Kind { // an older config may use the name with another kind
			if m.Quantile == nil {
				m.Quantile = b.Quantile
			}
			if m.Denominator == nil {
				m.Denominator = b.Denominator
			}
		}
		return Resolved{Metric: m, Origin: OriginBuiltin}, nil
	}
	return Resolved{Metric: m, Origin: OriginExperiment, Problem: fmt.Sprintf("metric %q has no source and is neither built in nor shared", m.Name)}, nil
}
