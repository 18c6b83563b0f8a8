package ingest

import (
	"regexp"
	"time"

	"github.com/expd/expd/validate"
)

// Bounds of an event, documented in docs/ingest.md.
const (
	MaxEventIDLen    = validate.MaxIDLen
	MaxRefLen        = 128 // experiment_id: a UUID or an experiment name
	MaxUserIDLen     = 256
	MaxModelLen      = 256
	MaxErrorLen      = 4 << 10
	MaxTextBytes     = 64 << 10 // prompt and response each
	MaxMetricNameLen = validate.MaxNameLen
	// MaxAhead is how far in the future a timestamp may be (clock skew).
	MaxAhead = 5 * time.Minute
	// LiveMaxAge is how old an event of POST /v1/events may be: the client
	// replays its offline spill file within 24 hours.
	LiveMaxAge = 24 * time.Hour
)

// Same rule as experiment variants.
var variantPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Window bounds the timestamps accepted at one instant.
type Window struct {
	Now    time.Time
	MaxAge time.Duration
}

// Check validates every field of e, including that its fields belong to
// its type, and returns the parsed timestamp.
func (e *Event) Check(w Window) (time.Time, error) {
	var errs validate.Errors
	errs.ID("event_id", e.EventID)
	errs.Text("experiment_id", e.ExperimentID, MaxRefLen, true)
	errs.Text("user_id", e.UserID, MaxUserIDLen, true)
	ts := errs.Timestamp("timestamp", e.Timestamp, w.Now, w.MaxAge, MaxAhead)
	if e.Variant != nil && !variantPattern.MatchString(*e.Variant) {
		errs.Add("variant", "must be a variant name (letters, digits, '.', '_', '-'; at most 64)")
	}
	if e.ConfigVersion != nil && *e.ConfigVersion < 0 {
		errs.Add("config_version", "must be >= 0")
	}
	switch e.Type {
	case TypeExposure:
		if e.Variant == nil {
			errs.Add("variant", "is required for exposure events")
		}
		e.forbid(&errs, e.modelCallFields(), e.businessFields())
	case TypeModelCall:
		e.checkModelCall(&errs)
		e.forbid(&errs, e.businessFields())
	case TypeBusinessEvent:
		e.checkBusiness(&errs)
		e.forbid(&errs, e.modelCallFields())
	case "":
		errs.Add("type", "is required")
	default:
		errs.Add("type", "must be %q, %q or %q", TypeExposure, TypeModelCall, TypeBusinessEvent)
	}
	return ts, errs.Err()
}

func (e *Event) checkModelCall(errs *validate.Errors) {
	if e.LatencyMs == nil {
		errs.Add("latency_ms", "is required for model_call events")
	}
	nonNegative(errs, "latency_ms", e.LatencyMs)
	nonNegative(errs, "cost_usd", e.CostUSD)
	nonNegative(errs, "time_to_first_token_ms", e.TimeToFirstTokenMs)
	for _, f := range []struct {
		name string
		v    *int64
	}{{"input_tokens", e.InputTokens}, {"output_tokens", e.OutputTokens}, {"total_tokens", e.TotalTokens}} {
		if f.v != nil && *f.v < 0 {
			errs.Add(f.name, "must be >= 0")
		}
	}
	optionalText(errs, "model", e.Model, MaxModelLen)
	optionalText(errs, "error", e.Error, MaxErrorLen)
	optionalText(errs, "prompt", e.Prompt, MaxTextBytes)
	optionalText(errs, "response", e.Response, MaxTextBytes)
}

func (e *Event) checkBusiness(errs *validate.Errors) {
	if e.BusinessMetric == nil || *e.BusinessMetric == "" {
		errs.Add("business_metric", "is required for business_event events")
		return
	}
	errs.Name("business_metric", *e.BusinessMetric)
}

// forbid reports fields of another event type: a client that sends them
// has mixed up its events, and silently dropping them would hide that.
func (e *Event) forbid(errs *validate.Errors, groups ...[]presence) {
	for _, g := range groups {
		for _, f := range g {
			if f.set {
				errs.Add(f.name, "is not a field of %s events", e.Type)
			}
		}
	}
}

// presence says whether an optional field was sent.
type presence struct {
	name string
	set  bool
}

func (e *Event) modelCallFields() []presence {
	return []presence{
		{"model", e.Model != nil}, {"latency_ms", e.LatencyMs != nil}, {"input_tokens", e.InputTokens != nil},
		{"output_tokens", e.OutputTokens != nil}, {"total_tokens", e.TotalTokens != nil}, {"cost_usd", e.CostUSD != nil},
		{"time_to_first_token_ms", e.TimeToFirstTokenMs != nil}, {"error", e.Error != nil},
		{"prompt", e.Prompt != nil}, {"response", e.Response != nil},
	}
}

func (e *Event) businessFields() []presence {
	return []presence{{"business_metric", e.BusinessMetric != nil}, {"value", e.Value != nil}}
}

func nonNegative(errs *validate.Errors, field string, v *float64) {
	if v != nil && *v < 0 {
		errs.Add(field, "must be >= 0")
	}
}

func optionalText(errs *validate.Errors, field string, v *string, max int) {
	if v != nil {
		errs.Text(field, *v, max, false)
	}
}
