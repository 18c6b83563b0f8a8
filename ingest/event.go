package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/expd/expd/validate"
	"github.com/expd/expd/vocab"
)

// Event is one event as clients send it. Optional fields are pointers so
// that a missing field and JSON null (which the Python SDK sends for
// unknown values) both read as absent. Unknown fields are ignored, so
// newer clients can add fields without breaking older servers.
type Event struct {
	EventID      string           `json:"event_id"`
	Type         vocab.RecordType `json:"type"`
	ExperimentID string           `json:"experiment_id"`
	UserID       string           `json:"user_id"`
	Timestamp    string           `json:"timestamp"`

	Variant       *string `json:"variant"`
	ConfigVersion *int64  `json:"config_version"`

	vocab.ModelCall // the model-call fields (vocab.ModelCallFields)

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
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) { // the field path names the embedded struct
			te.Field = strings.TrimPrefix(te.Field, "ModelCall.")
		}
		return e, validate.DecodeError(err)
	}
	return e, nil
}
