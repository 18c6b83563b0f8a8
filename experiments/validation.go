package experiments

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/validate"
)

// Bounds of a config; documented in README.md ("Experiment configs").
const (
	MaxNameLen      = 128
	MinSaltLen      = 8
	MaxSaltLen      = 64
	MaxVariants     = 20
	MaxMetrics      = 50
	MaxPromptBytes  = 64 << 10
	MaxVariableKeys = 100
	// Bounds of sequential_tuning (N*, total users).
	MinSequentialTuning = 100
	MaxSequentialTuning = 1_000_000_000
)

var (
	namePattern    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	saltPattern    = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	variantPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

	metricKinds      = set("proportion", "mean", "sum", "count", "quantile", "ratio")
	metricCategories = set("primary", "secondary", "guardrail")
	metricMethods    = set("welch_t", "z_test", "mann_whitney", "permutation", "bootstrap")
	// Quantile and ratio metrics have one test each, named here.
	kindMethods = map[string]string{"quantile": "clustered_quantile", "ratio": "delta_ratio"}
	eventTypes  = set("exposure", "model_call", "business_event")
	// Numeric fields of model_call events that a metric may read.
	modelCallFields = set("latency_ms", "input_tokens", "output_tokens", "total_tokens", "cost_usd", "time_to_first_token_ms", "error")
	// Statuses a config may ask for; scheduled and shipped are reached
	// through start_at and the ship route.
	statuses    = set(StatusDraft, StatusRunning, StatusStopped)
	allStatuses = set(StatusDraft, StatusScheduled, StatusRunning, StatusStopped, StatusShipped)
)

func set(vals ...string) map[string]bool {
	m := make(map[string]bool, len(vals))
	for _, v := range vals {
		m[v] = true
	}
	return m
}

// Validate checks every field of a config and reports all failures at once.
func (c *Config) Validate() error {
	var errs validate.Errors
	switch {
	case c.Name == "":
		errs.Add("name", "is required")
	case len(c.Name) > MaxNameLen:
		errs.Add("name", "must be at most %d characters", MaxNameLen)
	case !namePattern.MatchString(c.Name):
		errs.Add("name", "must start with a letter or digit and use only letters, digits, '.', '_' and '-'")
	case uuid.Validate(c.Name) == nil:
		errs.Add("name", "must not be a UUID: experiments are addressed by id or name, so a UUID-shaped name would be ambiguous")
	}
	switch {
	case c.Salt == "":
		errs.Add("salt", "is required")
	case len(c.Salt) < MinSaltLen || len(c.Salt) > MaxSaltLen:
		errs.Add("salt", "must be %d to %d characters", MinSaltLen, MaxSaltLen)
	case !saltPattern.MatchString(c.Salt):
		errs.Add("salt", "must use only letters, digits, '_' and '-'")
	}
	if c.BucketCount == 0 {
		errs.Add("bucket_count", "is required (1 to %d)", bucketing.MaxBucketCount)
	} else if c.BucketCount > bucketing.MaxBucketCount {
		errs.Add("bucket_count", "must be at most %d", bucketing.MaxBucketCount)
	}
	if c.Status != "" && !allStatuses[c.Status] {
		errs.Add("status", "%q is not a lifecycle status", c.Status)
	}
	if c.StartAt != nil && c.StopAt != nil && !c.StopAt.After(*c.StartAt) {
		errs.Add("stop_at", "must be after start_at")
	}
	c.validateAllocation(&errs)
	c.validateVariants(&errs)
	c.validateMetrics(&errs)
	c.validateInference(&errs)
	return errs.Err()
}

func (c *Config) validateAllocation(errs *validate.Errors) {
	if c.Allocation == nil {
		errs.Add("allocation", "is required")
		return
	}
	if len(c.Allocation) > MaxVariants {
		errs.Add("allocation", "must have at most %d variants", MaxVariants)
	}
	for i, s := range c.Allocation {
		if s.Variant != "" && !variantPattern.MatchString(s.Variant) {
			errs.Add(fmt.Sprintf("allocation[%d].variant", i), "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
		}
	}
	for _, fe := range bucketing.FieldErrors(bucketing.ValidateAllocation(c.Allocation)) {
		errs.Add(fe.Field, "%s", fe.Reason)
	}
	if c.Control != "" && !c.hasVariant(c.Control) {
		errs.Add("control", "must name a variant of the allocation")
	}
}

func (c *Config) hasVariant(name string) bool {
	for _, s := range c.Allocation {
		if s.Variant == name {
			return true
		}
	}
	return false
}

func (c *Config) validateVariants(errs *validate.Errors) {
	for name, v := range c.Variants {
		field := "variants." + name
		if !c.hasVariant(name) {
			errs.Add(field, "is not in the allocation")
		}
		errs.Text(field+".prompt", v.Prompt, MaxPromptBytes, false)
		if len(v.Variables) > MaxVariableKeys {
			errs.Add(field+".variables", "must have at most %d keys", MaxVariableKeys)
		}
		for key, val := range v.Variables {
			checkJSONText(errs, field+".variables."+key, key, val)
		}
	}
}

func (c *Config) validateMetrics(errs *validate.Errors) {
	if c.Metrics == nil {
		errs.Add("metrics", "is required (an empty list is allowed)")
		return
	}
	if len(c.Metrics) > MaxMetrics {
		errs.Add("metrics", "must have at most %d metrics", MaxMetrics)
	}
	seen := map[string]bool{}
	for i, m := range c.Metrics {
		f := func(name string) string { return fmt.Sprintf("metrics[%d].%s", i, name) }
		switch {
		case m.Name == "":
			errs.Add(f("name"), "is required")
		case !variantPattern.MatchString(m.Name):
			errs.Add(f("name"), "must be 1-64 letters, digits, '.', '_' or '-'")
		case seen[m.Name]:
			errs.Add(f("name"), "duplicates metric %q", m.Name)
		}
		seen[m.Name] = true
		checkEnum(errs, f("kind"), m.Kind, metricKinds)
		checkEnum(errs, f("category"), m.Category, metricCategories)
		if own, ok := kindMethods[m.Kind]; ok {
			if m.MethodDefault != "" && m.MethodDefault != own {
				errs.Add(f("method_default"), "must be %q (or omitted) for %s metrics", own, m.Kind)
			}
		} else {
			checkEnum(errs, f("method_default"), m.MethodDefault, metricMethods)
		}
		if m.MethodDefault == "z_test" && m.Kind != "" && m.Kind != "proportion" {
			errs.Add(f("method_default"), "z_test applies to proportion metrics only")
		}
		if m.MetricVersion < 1 {
			errs.Add(f("metric_version"), "is required and must be an integer >= 1")
		}
		if m.SharedOrgWide == nil {
			errs.Add(f("shared_org_wide"), "is required (true or false)")
		}
		if m.Source != nil {
			validateSource(errs, f("source"), m.Source)
		}
		if m.Guardrail != nil {
			m.Guardrail.validate(errs, f("guardrail"))
		}
		validateMetricOptions(errs, f, m)
	}
}

// validateMetricOptions checks the fields of issue 12: cuped, quantile,
// denominator and non_inferiority_margin.
func validateMetricOptions(errs *validate.Errors, f func(string) string, m Metric) {
	if m.CUPED != nil && *m.CUPED && (m.MethodDefault != "welch_t" && m.MethodDefault != "z_test") {
		errs.Add(f("cuped"), "needs method_default welch_t or z_test (CUPED has no rank or resampling form)")
	}
	switch {
	case m.Kind == "quantile" && m.Source != nil && m.Quantile == nil:
		// Without a source, a built-in or shared definition supplies it.
		errs.Add(f("quantile"), "is required for a quantile metric with a source (a number in (0, 1), e.g. 0.95)")
	case m.Quantile != nil && m.Kind != "quantile":
		errs.Add(f("quantile"), "applies to kind quantile only")
	case m.Quantile != nil && !(*m.Quantile > 0 && *m.Quantile < 1):
		errs.Add(f("quantile"), "must be strictly between 0 and 1")
	}
	if m.Kind == "quantile" && m.Source != nil && (m.Source.EventType != "model_call" || m.Source.Field == "error") {
		errs.Add(f("source"), "a quantile metric reads a numeric model_call field (latency_ms, time_to_first_token_ms, ...)")
	}
	switch {
	case m.Kind == "ratio" && m.Source != nil && m.Denominator == nil:
		// Without a source, a built-in or shared definition supplies both.
		errs.Add(f("denominator"), "is required for a ratio metric with a source (the per-user denominator)")
	case m.Denominator != nil && m.Kind != "ratio":
		errs.Add(f("denominator"), "applies to kind ratio only")
	case m.Denominator != nil:
		validateDenominator(errs, f("denominator"), m.Denominator)
	}
	if nm := m.NonInferiorityMargin; nm != nil {
		if !(nm.Value > 0) || nm.Value > 1e15 {
			errs.Add(f("non_inferiority_margin.value"), "must be a positive number")
		}
		checkEnum(errs, f("non_inferiority_margin.type"), nm.Type, marginTypes)
		checkEnum(errs, f("non_inferiority_margin.bad_direction"), nm.BadDirection, badDirections)
	}
}

var (
	marginTypes   = set("absolute", "relative")
	badDirections = set("increase", "decrease")
)

// validateDenominator is validateSource, except that a model_call
// denominator may name no field: it then counts calls.
func validateDenominator(errs *validate.Errors, field string, s *MetricSource) {
	if s.EventType == "model_call" && s.Field == "" {
		return
	}
	validateSource(errs, field, s)
}

func (c *Config) validateInference(errs *validate.Errors) {
	switch c.Inference {
	case "", InferenceSequential:
	case InferenceFixedHorizon:
		if c.PlannedEndDate == "" {
			errs.Add("planned_end_date", "is required with fixed_horizon inference: a fixed-horizon test is read once, at its planned end")
		}
	default:
		errs.Add("inference", "%q is not allowed (sequential or fixed_horizon)", c.Inference)
	}
	if c.PlannedEndDate != "" {
		if _, err := time.Parse(time.DateOnly, c.PlannedEndDate); err != nil {
			errs.Add("planned_end_date", "must be a date YYYY-MM-DD")
		}
	}
	if t := c.SequentialTuning; t != nil && !(*t >= MinSequentialTuning && *t <= MaxSequentialTuning) {
		errs.Add("sequential_tuning", "must be a number of users from %d to %d", MinSequentialTuning, MaxSequentialTuning)
	}
}

func validateSource(errs *validate.Errors, field string, s *MetricSource) {
	checkEnum(errs, field+".event_type", s.EventType, eventTypes)
	switch s.EventType {
	case "model_call":
		if !modelCallFields[s.Field] {
			errs.Add(field+".field", "must be one of latency_ms, input_tokens, output_tokens, total_tokens, cost_usd, time_to_first_token_ms, error")
		}
	case "business_event":
		if s.BusinessMetric == "" {
			errs.Add(field+".business_metric", "is required for business_event metrics")
		}
	}
}

func checkEnum(errs *validate.Errors, field, v string, allowed map[string]bool) {
	if v == "" {
		errs.Add(field, "is required")
	} else if !allowed[v] {
		errs.Add(field, "%q is not allowed", v)
	}
}

// checkJSONText refuses NUL characters anywhere in a free-form JSON value
// (keys included): PostgreSQL's JSONB cannot store them, so both databases
// refuse them alike instead of one answering 500.
func checkJSONText(errs *validate.Errors, field, key string, v any) {
	if strings.IndexByte(key, 0) >= 0 {
		errs.Add(field, "must not contain NUL characters in keys")
		return
	}
	switch x := v.(type) {
	case string:
		if strings.IndexByte(x, 0) >= 0 {
			errs.Add(field, "must not contain NUL characters")
		}
	case []any:
		for i, item := range x {
			checkJSONText(errs, fmt.Sprintf("%s[%d]", field, i), "", item)
		}
	case map[string]any:
		for k, item := range x {
			checkJSONText(errs, field+"."+k, k, item)
		}
	}
}
