package ingest

import (
	"time"

	"github.com/expd/expd/validate"
	"github.com/expd/expd/vocab"
)

// Bounds of an event, documented in docs/ingest.md.
const (
	MaxEventIDLen    = validate.MaxIDLen
	MaxRefLen        = 128 // experiment_id: a UUID or an experiment name
	MaxUserIDLen     = 256
	MaxMetricNameLen = validate.MaxNameLen
	// The model-call fields' bounds are in vocab.ModelCallFields.
	// MaxAhead is how far in the future a timestamp may be (clock skew).
	MaxAhead = 5 * time.Minute
	// LiveMaxAge is how old an event of POST /v1/events may be: the client
	// replays its offline spill file within 24 hours.
	LiveMaxAge = 24 * time.Hour
)

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
	if e.Variant != nil && !validate.ValidVariant(*e.Variant) {
		errs.Add("variant", "must be a variant name (letters, digits, '.', '_', '-'; at most 64)")
	}
	if e.ConfigVersion != nil && *e.ConfigVersion < 0 {
		errs.Add("config_version", "must be >= 0")
	}
	switch e.Type {
	case vocab.TypeExposure:
		if e.Variant == nil {
			errs.Add("variant", "is required for %s events", vocab.TypeExposure)
		}
		e.forbid(&errs, e.modelCallFields(), e.businessFields())
	case vocab.TypeModelCall:
		for _, f := range vocab.ModelCallFields {
			f.Check(&errs, &e.ModelCall)
		}
		e.forbid(&errs, e.businessFields())
	case vocab.TypeBusinessEvent:
		e.checkBusiness(&errs)
		e.forbid(&errs, e.modelCallFields())
	case "":
		errs.Add("type", "is required")
	default:
		errs.Add("type", "must be %s", vocab.JoinOr(vocab.RecordTypes, "%q"))
	}
	return ts, errs.Err()
}

func (e *Event) checkBusiness(errs *validate.Errors) {
	if e.BusinessMetric == nil || *e.BusinessMetric == "" {
		errs.Add("business_metric", "is required for %s events", vocab.TypeBusinessEvent)
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
	out := make([]presence, len(vocab.ModelCallFields))
	for i, f := range vocab.ModelCallFields {
		out[i] = presence{f.Name, f.Set(&e.ModelCall)}
	}
	return out
}

func (e *Event) businessFields() []presence {
	return []presence{{"business_metric", e.BusinessMetric != nil}, {"value", e.Value != nil}}
}
