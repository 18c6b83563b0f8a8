// Package evaluators owns online evaluators (docs/quality.md
// "Evaluators"): the evaluators table, their validation, the code checks
// and the LLM-judge client. An evaluator scores sampled model calls by
// itself and writes its scores through the scores path (package scores,
// ingest's group commit) with source judge or code.
package evaluators

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/expd/expd/scores"
	"github.com/expd/expd/sdk/prices"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/webhooks"
)

// Kinds of evaluator.
const (
	KindJudge = "llm_judge" // an OpenAI-compatible chat-completions model grades the answer
	KindCode  = "code"      // a deterministic check of the answer
)

// Bounds of an evaluator (docs/quality.md).
const (
	MaxNameLen        = 128
	MaxTemplateLen    = 32 << 10
	MaxModelLen       = 256
	MaxAPIKeyLen      = 4 << 10
	MaxExperiments    = 50
	MaxConcurrency    = 64
	DefaultConc       = 4
	MaxDailyEvals     = 1_000_000
	MaxDailyCostUSD   = 100_000
	maxExperimentRef  = 256
	TemplateOutputVar = "{{output}}"
)

// TemplateVars are the placeholders a judge template may use.
var TemplateVars = []string{"{{input}}", "{{output}}", "{{variant}}", "{{variant_prompt}}"}

var placeholder = regexp.MustCompile(`\{\{\s*[A-Za-z0-9_.-]*\s*\}\}`)

// Endpoint is a judge's OpenAI-compatible API. APIKey is write-only: the
// API takes it and never shows it again (Evaluator.Endpoint has none).
type Endpoint struct {
	BaseURL string `json:"base_url"`
	Model   string `json:"model"`
	APIKey  string `json:"api_key,omitempty"`
}

// Budget bounds an evaluator's work per UTC day. MaxCostUSD (judges only)
// is absent for no cost bound.
type Budget struct {
	MaxEvaluations int64    `json:"max_evaluations"`
	MaxCostUSD     *float64 `json:"max_cost_usd,omitempty"`
}

// Spec is an evaluator as POST and PUT /v1/evaluators take it.
type Spec struct {
	Name         string    `json:"name"`
	Score        string    `json:"score"`
	Kind         string    `json:"kind"`
	Experiments  []string  `json:"experiments"`
	SamplingRate *float64  `json:"sampling_rate"`
	DailyBudget  *Budget   `json:"daily_budget"`
	Concurrency  int       `json:"concurrency,omitempty"`
	Endpoint     *Endpoint `json:"endpoint,omitempty"`
	Template     string    `json:"template,omitempty"`
	Range        []float64 `json:"range,omitempty"`
	Check        *Check    `json:"check,omitempty"`
}

// Rules are what validating a spec needs from the server.
type Rules struct {
	// AllowPrivate lets a judge endpoint be http and on a local address
	// (expd dev only, as for outbound webhooks).
	AllowPrivate bool
	Resolver     webhooks.Resolver
	// Experiments resolves experiment ids or names of the org to ids;
	// refs it does not know are absent from the answer.
	Experiments func(ctx context.Context, refs []string) (map[string]string, error)
	// KeyStored: an update may omit the judge's api_key to keep the
	// stored one.
	KeyStored bool
	// Judgeable refuses a judge over experiments (ids; none: all of the
	// org's) whose payload policy keeps no text to read (docs/privacy.md);
	// nil: no check.
	Judgeable func(ctx context.Context, experimentIDs []string) error
}

// Validate checks s, fills its defaults (concurrency) and resolves its
// experiments to ids; every bad field is named. A lookup failure is
// returned as is (not a validation error).
func (s *Spec) Validate(ctx context.Context, r Rules) error {
	var errs validate.Errors
	errs.Text("name", s.Name, MaxNameLen, true)
	if s.Score == "" {
		errs.Add("score", "is required: the name of the score the evaluator writes")
	}
	errs.Name("score", s.Score)
	if s.SamplingRate == nil {
		errs.Add("sampling_rate", "is required: the share of calls evaluated, in (0, 1]")
	} else if rate := *s.SamplingRate; !(rate > 0 && rate <= 1) {
		errs.Add("sampling_rate", "must be greater than 0 and at most 1")
	}
	if s.Concurrency == 0 {
		s.Concurrency = DefaultConc
	}
	if s.Concurrency < 1 || s.Concurrency > MaxConcurrency {
		errs.Add("concurrency", "must be an integer from 1 to %d", MaxConcurrency)
	}
	s.checkBudget(&errs)
	switch s.Kind {
	case KindJudge:
		s.checkJudge(ctx, &errs, r)
	case KindCode:
		s.checkCode(&errs)
	case "":
		errs.Add("kind", "is required: %q or %q", KindJudge, KindCode)
	default:
		errs.Add("kind", "must be %q or %q", KindJudge, KindCode)
	}
	if err := s.resolveExperiments(ctx, &errs, r); err != nil {
		return err
	}
	if err := errs.Err(); err != nil || s.Kind != KindJudge || r.Judgeable == nil {
		return err
	}
	return r.Judgeable(ctx, s.Experiments)
}

func (s *Spec) checkBudget(errs *validate.Errors) {
	b := s.DailyBudget
	if b == nil {
		errs.Add("daily_budget", "is required: {\"max_evaluations\": n} (and for judges optionally max_cost_usd)")
		return
	}
	if b.MaxEvaluations < 1 || b.MaxEvaluations > MaxDailyEvals {
		errs.Add("daily_budget.max_evaluations", "must be an integer from 1 to %d", MaxDailyEvals)
	}
	if b.MaxCostUSD != nil {
		switch c := *b.MaxCostUSD; {
		case s.Kind == KindCode:
			errs.Add("daily_budget.max_cost_usd", "is a bound of %q evaluators only (code checks cost nothing)", KindJudge)
		case math.IsNaN(c) || c <= 0 || c > MaxDailyCostUSD:
			errs.Add("daily_budget.max_cost_usd", "must be greater than 0 and at most %d", MaxDailyCostUSD)
		}
	}
}

func (s *Spec) checkJudge(ctx context.Context, errs *validate.Errors, r Rules) {
	if s.Check != nil {
		errs.Add("check", "is a field of %q evaluators", KindCode)
	}
	s.checkTemplate(errs)
	switch {
	case len(s.Range) != 2:
		errs.Add("range", "is required: [min, max], the scale the judge scores on")
	case !(s.Range[0] < s.Range[1]):
		errs.Add("range", "must be [min, max] with min < max")
	}
	e := s.Endpoint
	if e == nil {
		errs.Add("endpoint", "is required: {\"base_url\", \"model\", \"api_key\"} of an OpenAI-compatible API")
		return
	}
	errs.Text("endpoint.base_url", e.BaseURL, webhooks.MaxURLLen, true)
	errs.Text("endpoint.model", e.Model, MaxModelLen, true)
	errs.Text("endpoint.api_key", e.APIKey, MaxAPIKeyLen, !r.KeyStored)
	if _, priced := prices.Lookup(e.Model); !priced && s.DailyBudget != nil && s.DailyBudget.MaxCostUSD != nil {
		errs.Add("daily_budget.max_cost_usd", "cannot be enforced: model %q has no price in expd's table (sdk/prices); bound max_evaluations instead", e.Model)
	}
	if e.BaseURL != "" && len(e.BaseURL) <= webhooks.MaxURLLen {
		var bad *webhooks.URLError
		if err := webhooks.CheckURL(ctx, e.BaseURL, r.AllowPrivate, r.Resolver); err != nil && errors.As(err, &bad) {
			errs.Add("endpoint.base_url", "%s", bad.Reason)
		}
	}
}

func (s *Spec) checkTemplate(errs *validate.Errors) {
	errs.Text("template", s.Template, MaxTemplateLen, true)
	if s.Template == "" {
		return
	}
	if !strings.Contains(s.Template, TemplateOutputVar) {
		errs.Add("template", "must contain %s: the answer the judge grades", TemplateOutputVar)
	}
	for _, p := range placeholder.FindAllString(s.Template, -1) {
		if !slices.Contains(TemplateVars, p) {
			errs.Add("template", "has an unknown placeholder %s (known: %s)", p, strings.Join(TemplateVars, ", "))
			break
		}
	}
}

func (s *Spec) checkCode(errs *validate.Errors) {
	if s.Endpoint != nil {
		errs.Add("endpoint", "is a field of %q evaluators", KindJudge)
	}
	if s.Template != "" {
		errs.Add("template", "is a field of %q evaluators", KindJudge)
	}
	if s.Range != nil {
		errs.Add("range", "is a field of %q evaluators (a check scores 0 or 1)", KindJudge)
	}
	if s.Check == nil {
		errs.Add("check", "is required: {\"type\": one of %s, ...parameters}", strings.Join(CheckTypes, ", "))
		return
	}
	if _, err := Compile("check", *s.Check); err != nil {
		for _, f := range validate.Fields(err) {
			errs.Add(f.Field, "%s", f.Reason)
		}
	}
}

// resolveExperiments replaces the refs by the experiments' ids; an
// unknown ref is named.
func (s *Spec) resolveExperiments(ctx context.Context, errs *validate.Errors, r Rules) error {
	if len(s.Experiments) > MaxExperiments {
		errs.Add("experiments", "lists at most %d experiments", MaxExperiments)
		return nil
	}
	if s.Experiments == nil {
		s.Experiments = []string{}
	}
	var refs []string
	for i, ref := range s.Experiments {
		if ref == "" || len(ref) > maxExperimentRef || strings.IndexByte(ref, 0) >= 0 || !utf8.ValidString(ref) {
			errs.Add(fmt.Sprintf("experiments[%d]", i), "must be an experiment's id or name (1 to %d bytes)", maxExperimentRef)
			continue
		}
		refs = append(refs, ref)
	}
	if len(refs) == 0 || r.Experiments == nil {
		return nil
	}
	ids, err := r.Experiments(ctx, refs)
	if err != nil {
		return fmt.Errorf("resolve experiments: %w", err)
	}
	seen := map[string]bool{}
	for i, ref := range s.Experiments {
		id, ok := ids[ref]
		switch {
		case !slices.Contains(refs, ref):
			continue // named above
		case !ok:
			errs.Add(fmt.Sprintf("experiments[%d]", i), "is no experiment of the org (an id or a name)")
		case seen[id]:
			errs.Add(fmt.Sprintf("experiments[%d]", i), "names an experiment listed before")
		default:
			s.Experiments[i] = id
		}
		seen[id] = true
	}
	return nil
}

// Source is the score source an evaluator of kind writes.
func Source(kind string) string {
	if kind == KindJudge {
		return scores.SourceJudge
	}
	return scores.SourceCode
}
