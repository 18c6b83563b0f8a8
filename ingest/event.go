package ingest

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/expd/expd/validate"
)

// Event types.
const (
	TypeExposure      = "exposure"
	TypeModelCall     = "model_call"
	TypeBusinessEvent = "business_event"
)

// Event is one event as clients send it. Optional fields are pointers so
// that a missing field and JSON null (which the Python SDK sends for
// unknown values) both read as absent. Unknown fields are ignored, so
// newer clients can add fields without breaking older servers.
type Event struct {
	EventID      string `json:"event_id"`
	Type         string `json:"type"`
	ExperimentID string `json:"experiment_id"`
	UserID       string `json:"user_id"`
	Timestamp    string `json:"timestamp"`

	Variant       *string `json:"variant"`
	ConfigVersion *int64  `json:"config_version"`

	Model              *string  `json:"model"`
	LatencyMs          *float64 `json:"latency_ms"`
	InputTokens        *int64   `json:"input_tokens"`
	OutputTokens       *int64   `json:"output_tokens"`
	TotalTokens        *int64   `json:"total_tokens"`
	CostUSD            *float64 `json:"cost_usd"`
	TimeToFirstTokenMs *float64 `json:"time_to_first_token_ms"`
	Error              *string  `json:"error"`
	Prompt             *string  `json:"prompt"`
	Response           *string  `json:"response"`

	BusinessMetric *string  `json:"business_metric"`
	Value          *float64 `json:"value"`
}

var errNotObject = validate.New("event", "must be a JSON object")

// Decode reads one event. A field of the wrong JSON type is reported as a
// validation error naming it.
func Decode(raw []byte) (Event, error) {
	var e Event
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return e, errNotObject
	}
	if err := json.Unmarshal(trimmed, &e); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return e, validate.New("event", "malformed JSON at byte %d", syntax.Offset)
		}
		return e, validate.DecodeError(err)
	}
	return e, nil
}
