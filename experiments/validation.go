package experiments

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/targeting"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/vocab"
)

// Bounds of a config; documented in README.md ("Experiment configs").
const (
	MaxNameLen      = 128
	MinSaltLen      = validate.MinSaltLen
	MaxSaltLen      = validate.MaxSaltLen
	MaxVariants     = 20
	MaxMetrics      = 50
	MaxPromptBytes  = 64 << 10
	MaxVariableKeys = 100
	// Bounds of sequential_tuning (N*, total users).
	MinSequentialTuning = 100
	MaxSequentialTuning = 1_000_000_000
)

// validName says whether v is an experiment's name: 1 to MaxNameLen
// letters, digits, '.', '_' or '-', starting with a letter or digit (the
// variants' rule, longer).
func validName(v string) bool { return validate.ValidToken(v, MaxNameLen, "._-") }

var (
	metricCategories = set("primary", "secondary", "guardrail")
	metricMethods    = set(vocab.Strings(stats.Methods)...)
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
	case !validName(c.Name):
		errs.Add("name", "must start with a letter or digit and use only letters, digits, '.', '_' and '-'")
	case uuid.Validate(c.Name) == nil:
		errs.Add("name", "must not be a UUID: experiments are addressed by id or name, so a UUID-shaped name would be ambiguous")
	}
	errs.Salt("salt", c.Salt)
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
	if _, bad := c.TargetingCondition(); len(bad) > 0 {
		for _, fe := range bad {
			errs.Add(targeting.ProblemField(fe), "%s", fe.Reason)
		}
	}
	c.validateLayer(&errs)
	c.validateVariants(&errs)
	c.validateMetrics(&errs)
	c.validateInference(&errs)
	if c.PayloadPolicy != "" && !c.PayloadPolicy.Valid() {
		errs.Add("payload_policy", "must be one of store, redact, hash, drop (and no looser than the org's)")
	}
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
		if s.Variant != "" && !validate.ValidVariant(s.Variant) {
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
	for i := range c.Metrics {
		m := &c.Metrics[i] // validation fills bad_direction from goal
		f := func(name string) string { return fmt.Sprintf("metrics[%d].%s", i, name) }
		switch {
		case m.Name == "":
			errs.Add(f("name"), "is required")
		case !validate.ValidVariant(m.Name):
			errs.Add(f("name"), "must be 1-64 letters, digits, '.', '_' or '-'")
		case seen[m.Name]:
			errs.Add(f("name"), "duplicates metric %q", m.Name)
		}
		seen[m.Name] = true
		spec, _ := vocab.Spec(m.Kind)
		scored := m.Source != nil && m.Source.EventType == vocab.TypeScore
		if scored {
			spec = spec.ForSource(vocab.TypeScore)
		}
		checkKnown(errs, f("kind"), string(m.Kind), m.Kind.Valid())
		checkEnum(errs, f("category"), m.Category, metricCategories)
		if spec.Test != "" {
			if m.MethodDefault != "" && m.MethodDefault != spec.Test {
				errs.Add(f("method_default"), "must be %q (or omitted) for %s metrics", spec.Test, m.Kind)
			}
		} else {
			checkEnum(errs, f("method_default"), m.MethodDefault, metricMethods)
		}
		switch {
		case m.MethodDefault == string(stats.ZTest) && scored:
			errs.Add(f("method_default"), "%s needs per-user values of 0 or 1; a %s metric's is a mean over the user's scored calls (use %s)", stats.ZTest, vocab.TypeScore, stats.WelchT)
		case m.MethodDefault == string(stats.ZTest) && m.Kind != "" && !spec.ZeroOne:
			errs.Add(f("method_default"), "%s applies to %s metrics only", stats.ZTest, kindsWhere(func(s vocab.KindSpec) bool { return s.ZeroOne }))
		}
		if scored && m.Kind.Valid() && !spec.Scores {
			errs.Add(f("kind"), "a metric over %s values must be of kind %s", vocab.TypeScore, vocab.JoinOr(vocab.ScoreKinds(), "%s"))
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
		if m.Goal != "" && !goals[m.Goal] {
			errs.Add(f("goal"), "%q is not allowed (increase or decrease: the direction in which the metric gets better)", m.Goal)
		}
		if m.Guardrail != nil {
			m.Guardrail.validate(errs, f("guardrail"), m.Goal)
		}
		validateMetricOptions(errs, f, m)
	}
}

// validateMetricOptions checks the fields of issue 12: cuped, quantile,
// denominator and non_inferiority_margin, by what the kind's entry needs.
func validateMetricOptions(errs *validate.Errors, f func(string) string, m *Metric) {
	if m.CUPED != nil && *m.CUPED && !cupedMethod(m.MethodDefault) {
		errs.Add(f("cuped"), "needs method_default %s or %s (CUPED has no rank or resampling form)", stats.WelchT, stats.ZTest)
	}
	spec, _ := vocab.Spec(m.Kind)
	quantile := f(string(vocab.Quantile)) // the option is named after its kind
	switch {
	case spec.NeedsQuantile && m.Source != nil && m.Quantile == nil:
		// Without a source, a built-in or shared definition supplies it.
		errs.Add(quantile, "is required for a %s metric with a source (a number in (0, 1), e.g. 0.95)", m.Kind)
	case m.Quantile != nil && !spec.NeedsQuantile:
		errs.Add(quantile, "applies to kind %s only", kindsWhere(func(s vocab.KindSpec) bool { return s.NeedsQuantile }))
	case m.Quantile != nil && !(*m.Quantile > 0 && *m.Quantile < 1):
		errs.Add(quantile, "must be strictly between 0 and 1")
	}
	if spec.PerCall && m.Source != nil {
		field, _ := vocab.ModelCallField(m.Source.Field)
		if m.Source.EventType != vocab.TypeModelCall || field.Metric == vocab.Indicator {
			errs.Add(f("source"), "a %s metric reads a numeric %s field (latency_ms, time_to_first_token_ms, ...)", m.Kind, vocab.TypeModelCall)
		}
	}
	switch {
	case spec.NeedsDenominator && m.Source != nil && m.Denominator == nil:
		// Without a source, a built-in or shared definition supplies both.
		errs.Add(f("denominator"), "is required for a %s metric with a source (the per-user denominator)", m.Kind)
	case m.Denominator != nil && !spec.NeedsDenominator:
		errs.Add(f("denominator"), "applies to kind %s only", kindsWhere(func(s vocab.KindSpec) bool { return s.NeedsDenominator }))
	case m.Denominator != nil:
		validateDenominator(errs, f("denominator"), m.Denominator)
	}
	if nm := m.NonInferiorityMargin; nm != nil {
		if !(nm.Value > 0) || nm.Value > 1e15 {
			errs.Add(f("non_inferiority_margin.value"), "must be a positive number")
		}
		checkEnum(errs, f("non_inferiority_margin.type"), nm.Type, marginTypes)
		badDirection(errs, f("non_inferiority_margin.bad_direction"), &nm.BadDirection, m.Goal)
	}
	if m.MDE != nil && !(*m.MDE > 0 && *m.MDE < 1e6) {
		errs.Add(f("mde"), "must be a positive fraction of control (0.02 is 2%%)")
	}
}

// badDirection checks a rule's bad_direction against the metric's goal:
// omitted, it is the opposite of the goal; given, it must not contradict it.
func badDirection(errs *validate.Errors, field string, dir *string, goal string) {
	valid := goals[goal]
	switch {
	case *dir == "" && valid:
		*dir = Opposite(goal)
	case *dir == "":
		errs.Add(field, "is required when the metric has no goal (increase or decrease)")
	case !goals[*dir]:
		errs.Add(field, "%q is not allowed (increase or decrease)", *dir)
	case valid && *dir == goal:
		errs.Add(field, "contradicts the metric's goal %q: a metric that should %s gets worse when it moves the other way (omit bad_direction to use %q)", goal, goal, Opposite(goal))
	}
}

var (
	marginTypes = set(MarginAbsolute, MarginRelative)
	goals       = set(GoalIncrease, GoalDecrease)
)

// validateDenominator is validateSource, except that a model_call
// denominator may name no field: it then counts calls.
func validateDenominator(errs *validate.Errors, field string, s *MetricSource) {
	switch {
	case s.EventType == vocab.TypeModelCall && s.Field == "":
		return
	case s.EventType == vocab.TypeScore:
		errs.Add(field+".event_type", "a denominator counts or sums events; %q is not allowed", s.EventType)
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
	// expected_users becomes N* (NStar): the same bounds.
	if n := c.ExpectedUsers; n != nil && !(*n >= MinSequentialTuning && *n <= MaxSequentialTuning && *n == math.Trunc(*n)) {
		errs.Add("expected_users", "must be a whole number of users from %d to %d", MinSequentialTuning, MaxSequentialTuning)
	}
}

func validateSource(errs *validate.Errors, field string, s *MetricSource) {
	checkKnown(errs, field+".event_type", string(s.EventType), s.EventType.ValidSource())
	if s.EventType != vocab.TypeScore {
		if s.Score != "" {
			errs.Add(field+".score", "applies to event_type %q only", vocab.TypeScore)
		}
		if s.ScoreSource != "" {
			errs.Add(field+".score_source", "applies to event_type %q only", vocab.TypeScore)
		}
	}
	switch s.EventType {
	case vocab.TypeScore:
		if s.Score == "" {
			errs.Add(field+".score", "is required for %s metrics: the name of the scores to read (e.g. thumbs_up)", vocab.TypeScore)
		} else {
			errs.Name(field+".score", s.Score)
		}
		if s.ScoreSource != "" && !slices.Contains(scores.Sources, s.ScoreSource) {
			errs.Add(field+".score_source", "%q is not allowed (%s, or omitted for every source)", s.ScoreSource, strings.Join(scores.Sources, ", "))
		}
		if s.Field != "" || s.BusinessMetric != "" {
			errs.Add(field, "a %s source names its score (score, score_source), not a field or business_metric", vocab.TypeScore)
		}
	case vocab.TypeModelCall:
		if f, ok := vocab.ModelCallField(s.Field); !ok || f.Metric == vocab.NotReadable {
			errs.Add(field+".field", "must be one of %s", strings.Join(vocab.MetricFields(), ", "))
		}
	case vocab.TypeBusinessEvent:
		if s.BusinessMetric == "" {
			errs.Add(field+".business_metric", "is required for %s metrics", vocab.TypeBusinessEvent)
		}
	}
}

func checkEnum(errs *validate.Errors, field, v string, allowed map[string]bool) {
	checkKnown(errs, field, v, allowed[v])
}

// checkKnown reports v missing, or not allowed (known false).
func checkKnown(errs *validate.Errors, field, v string, known bool) {
	if v == "" {
		errs.Add(field, "is required")
	} else if !known {
		errs.Add(field, "%q is not allowed", v)
	}
}

// kindsWhere names the metric kinds whose entry satisfies keep, for
// messages.
func kindsWhere(keep func(vocab.KindSpec) bool) string {
	var names []string
	for _, s := range vocab.Kinds {
		if keep(s) {
			names = append(names, string(s.Name))
		}
	}
	return strings.Join(names, ", ")
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

// validateLayer checks the placement's shape; the layer's existence and
// the overlap with other experiments' ranges are checked when stored
// (Store.Create).
func (c *Config) validateLayer(errs *validate.Errors) {
	if c.Layer == nil {
		return
	}
	if uuid.Validate(c.Layer.ID) != nil {
		errs.Add("layer.id", "must be the id of one of the org's layers")
	}
	r := c.Layer.Range
	switch {
	case len(r) != 2:
		errs.Add("layer.range", "must be [start, end]: two fractions of the layer, 0 <= start < end <= 1")
	case r[0] < 0 || r[1] > 1 || r[0] >= r[1]:
		errs.Add("layer.range", "must satisfy 0 <= start < end <= 1; got [%g, %g]", r[0], r[1])
	}
}

// ValidateMetrics checks a list of metric definitions as a config's
// (holdouts measure theirs with the same rules); field names start with
// "metrics".
func ValidateMetrics(ms []Metric) error {
	var errs validate.Errors
	c := Config{Metrics: ms}
	c.validateMetrics(&errs)
	return errs.Err()
}
