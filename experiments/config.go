package experiments

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/layers"
	"github.com/expd/expd/privacy"
	"github.com/expd/expd/sdk/go/targeting"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/vocab"
)

// Config is ExperimentConfig as POST and PUT take it.
type Config struct {
	Name        string             `json:"name"`
	Description string             `json:"description,omitempty"`
	Salt        string             `json:"salt"`
	BucketCount uint32             `json:"bucket_count"`
	Control     string             `json:"control,omitempty"`
	Status      string             `json:"status,omitempty"`
	Allocation  []bucketing.Slice  `json:"allocation"`
	Variants    map[string]Variant `json:"variants,omitempty"`
	Metrics     []Metric           `json:"metrics"`
	// Targeting is who may enter: a condition over user attributes
	// (docs/targeting.md); absent or null: everyone.
	Targeting json.RawMessage `json:"targeting,omitempty"`
	// Layer places the experiment in a range of a layer
	// (docs/targeting.md, "Layers"); set at creation only.
	Layer *LayerPlacement `json:"layer,omitempty"`

	// Inference is "sequential" (the default when empty: always-valid
	// intervals and p-values, safe to read every day) or "fixed_horizon"
	// (read once at PlannedEndDate, YYYY-MM-DD). SequentialTuning is N*,
	// the total users at which the sequence is tightest; ExpectedUsers the
	// total sample size the team expects, N* when SequentialTuning is not
	// given (NStar). Both are fixed once the experiment has started
	// (Store.update): N* chosen after looking at the data breaks the
	// sequence's guarantee.
	Inference        string   `json:"inference,omitempty"`
	PlannedEndDate   string   `json:"planned_end_date,omitempty"`
	SequentialTuning *float64 `json:"sequential_tuning,omitempty"`
	ExpectedUsers    *float64 `json:"expected_users,omitempty"`
	// Lifecycle (docs/lifecycle.md): when the experiment's workflow starts
	// and stops it, and what it serves once shipped.
	StartAt        *time.Time `json:"start_at,omitempty"`
	StopAt         *time.Time `json:"stop_at,omitempty"`
	ShippedVariant string     `json:"shipped_variant,omitempty"`
	StatusReason   string     `json:"status_reason,omitempty"`
	// PayloadPolicy makes the org's payload policy stricter for this
	// experiment's model calls (docs/privacy.md); empty: the org's.
	PayloadPolicy privacy.Policy `json:"payload_policy,omitempty"`
}

// LayerPlacement is an experiment's range of a layer: Range is [start,
// end), fractions of the layer's space, 0 <= start < end <= 1.
type LayerPlacement struct {
	ID    string    `json:"id"`
	Range []float64 `json:"range"`
}

// Span is the placement's range (zero when it is not two numbers).
func (p *LayerPlacement) Span() layers.Range {
	if p == nil || len(p.Range) != 2 {
		return layers.Range{}
	}
	return layers.Range{Start: p.Range[0], End: p.Range[1]}
}

// Same tells whether two placements are the same layer and range.
func (p *LayerPlacement) Same(o *LayerPlacement) bool {
	if p == nil || o == nil {
		return p == o
	}
	return p.ID == o.ID && p.Span() == o.Span()
}

// Inference modes.
const (
	InferenceSequential   = "sequential"
	InferenceFixedHorizon = "fixed_horizon"
)

// Sequential tells whether the headline numbers are always-valid.
func (c *Config) Sequential() bool { return c.Inference != InferenceFixedHorizon }

// Variant carries what the client library reads for a variant.
type Variant struct {
	Prompt    string         `json:"prompt,omitempty"`
	Variables map[string]any `json:"variables,omitempty"`
}

// Metric is a MetricDefinition. SharedOrgWide is a pointer so that a
// missing field is told apart from false: the spec makes it required.
type Metric struct {
	Name          string        `json:"name"`
	Kind          vocab.Kind    `json:"kind"`
	Category      string        `json:"category"`
	MethodDefault string        `json:"method_default"`
	MetricVersion int           `json:"metric_version"`
	SharedOrgWide *bool         `json:"shared_org_wide"`
	Source        *MetricSource `json:"source,omitempty"`
	// Goal is the direction in which the metric gets better (increase or
	// decrease); optional on the wire: without one the metric is shown
	// neutrally and the verdict says its direction is not set.
	Goal string `json:"goal,omitempty"`
	// MDE is the smallest relative change (a fraction of control) worth
	// detecting; the verdict estimates the days until a primary metric's
	// interval could exclude it.
	MDE *float64 `json:"mde,omitempty"`

	// CUPED is on by default for welch_t and z_test metrics; false turns it off.
	CUPED *bool `json:"cuped,omitempty"`
	// Quantile in (0, 1) is the per-call quantile of a quantile metric.
	Quantile *float64 `json:"quantile,omitempty"`
	// Denominator is the per-user denominator of a ratio metric
	// (Source is the numerator): the sum of its field, or the count of its
	// events when it names no field.
	Denominator *MetricSource `json:"denominator,omitempty"`
	// NonInferiorityMargin asks for a non-inferiority test and decision.
	NonInferiorityMargin *Margin `json:"non_inferiority_margin,omitempty"`
	// Guardrail makes the experiment's workflow act when the metric moves
	// the bad way (docs/lifecycle.md).
	Guardrail *Guardrail `json:"guardrail,omitempty"`
}

// Margin is a non-inferiority margin: how much worse the treatment may be,
// absolute (on the metric's scale) or relative (a fraction of control),
// and the direction in which the metric gets worse.
type Margin struct {
	Value        float64 `json:"value"`
	Type         string  `json:"type"`          // "absolute" or "relative"
	BadDirection string  `json:"bad_direction"` // "increase" or "decrease"; defaults to the opposite of the metric's goal
}

// Types of a non-inferiority margin.
const (
	MarginAbsolute = "absolute" // on the metric's scale
	MarginRelative = "relative" // a fraction of control
)

// Goals of a metric: the direction in which it gets better.
const (
	GoalIncrease = "increase"
	GoalDecrease = "decrease"
)

// Opposite is the other direction: a metric whose goal is increase gets
// worse when it decreases.
func Opposite(direction string) string {
	switch direction {
	case GoalIncrease:
		return GoalDecrease
	case GoalDecrease:
		return GoalIncrease
	}
	return ""
}

// UsesCUPED tells whether the metric is analysed with CUPED: on unless
// turned off, for the mean-based tests of kinds compared on per-user
// values only.
func (m Metric) UsesCUPED() bool {
	if m.CUPED != nil && !*m.CUPED {
		return false
	}
	return cupedMethod(m.MethodDefault) && m.Kind.ByUser()
}

// cupedMethod tells whether a test has a CUPED form.
func cupedMethod(method string) bool {
	return method == string(stats.WelchT) || method == string(stats.ZTest)
}

// MetricSource says which events feed a metric: an event type and one of
// its numeric fields, or a business metric name; or (event_type score)
// the scores of one name of the users' model calls, of one source
// (human, judge, code) or, when ScoreSource is empty, of every source
// (docs/quality.md, "Score metrics").
type MetricSource struct {
	EventType      vocab.RecordType `json:"event_type"`
	Field          string           `json:"field,omitempty"`
	BusinessMetric string           `json:"business_metric,omitempty"`
	Score          string           `json:"score,omitempty"`
	ScoreSource    string           `json:"score_source,omitempty"`
}

// Targeted tells whether the config has a targeting condition.
func (c *Config) Targeted() bool {
	return len(c.Targeting) > 0 && string(c.Targeting) != "null"
}

// TargetingCondition compiles the targeting condition (nil: everyone);
// the errors name the invalid parts inside it.
func (c *Config) TargetingCondition() (*targeting.Condition, []targeting.FieldError) {
	if !c.Targeted() {
		return nil, nil
	}
	return targeting.Parse(c.Targeting)
}

// ControlVariant is the control arm: Control when set, else the first slice.
func (c *Config) ControlVariant() string {
	if c.Control != "" {
		return c.Control
	}
	if len(c.Allocation) > 0 {
		return c.Allocation[0].Variant
	}
	return ""
}

// Status values of an experiment.
const (
	StatusDraft     = "draft"     // not served: everyone gets control
	StatusScheduled = "scheduled" // waiting for start_at: everyone gets control
	StatusRunning   = "running"
	StatusStopped   = "stopped" // everyone gets control
	StatusShipped   = "shipped" // everyone gets the shipped variant; final
)

// UnmarshalJSON reads a Config; a start_at or stop_at that is not an
// RFC 3339 instant is a field error naming it (encoding/json reports a
// time's parse error without the field).
func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config
	var aux struct {
		*plain
		StartAt json.RawMessage `json:"start_at"`
		StopAt  json.RawMessage `json:"stop_at"`
	}
	aux.plain = (*plain)(c)
	if err := json.Unmarshal(b, &aux); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) { // the field path names the embedded alias
			te.Field = strings.TrimPrefix(te.Field, "plain.")
		}
		return err
	}
	var errs validate.Errors
	c.StartAt = instant(&errs, "start_at", aux.StartAt)
	c.StopAt = instant(&errs, "stop_at", aux.StopAt)
	return errs.Err()
}

func instant(errs *validate.Errors, field string, raw json.RawMessage) *time.Time {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var t time.Time
	if err := json.Unmarshal(raw, &t); err != nil {
		errs.Add(field, "must be an RFC 3339 instant, e.g. 2026-01-31T12:00:00Z")
		return nil
	}
	return &t
}

// Where the N* in force comes from (Config.NStar).
const (
	NStarFromSequentialTuning = "sequential_tuning"
	NStarFromExpectedUsers    = "expected_users"
	NStarFromDefault          = "default"
)

// NStar is the sequential tuning in force (the total users at which the
// always-valid sequence is tightest) and where it comes from:
// sequential_tuning, else expected_users (the sequence is then tightest
// where the experiment is expected to end), else stats.DefaultNStar.
func (c *Config) NStar() (float64, string) {
	switch {
	case c.SequentialTuning != nil:
		return *c.SequentialTuning, NStarFromSequentialTuning
	case c.ExpectedUsers != nil:
		return *c.ExpectedUsers, NStarFromExpectedUsers
	}
	return stats.DefaultNStar, NStarFromDefault
}
