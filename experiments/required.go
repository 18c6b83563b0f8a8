package experiments

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/expd/expd/validate"
)

// Required fields of the spec's schemas (part 2). A Go struct cannot tell
// a missing or null field from its zero value, and for some fields zero is
// a valid value (a weight of 0 parks a variant), so presence is checked on
// the JSON itself.
var (
	configRequired = []string{"name", "salt", "bucket_count", "allocation", "metrics"}
	// An update may leave out the frozen bucketing inputs: they are kept.
	updateRequired     = []string{"name", "allocation", "metrics"}
	sliceRequired      = []string{"variant", "weight"}
	metricRequired     = []string{"name", "kind", "category", "method_default", "metric_version", "shared_org_wide"}
	metricRequiredPOST = []string{"name", "kind", "category", "method_default", "shared_org_wide"}
)

// DecodeConfig reads an ExperimentConfig body: every required field
// missing or null is a field error ("allocation[1].weight: is required"),
// then the body is decoded (wrong types are field errors too). An update
// may leave out salt and bucket_count, which Update keeps.
func DecodeConfig(body []byte, update bool) (Config, error) {
	var cfg Config
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return cfg, validate.DecodeError(err)
	}
	var errs validate.Errors
	required := configRequired
	if update {
		required = updateRequired
	}
	requireFields(&errs, "", top, required)
	for i, item := range objects(top["allocation"]) {
		requireFields(&errs, fmt.Sprintf("allocation[%d].", i), item, sliceRequired)
	}
	for i, item := range objects(top["metrics"]) {
		requireFields(&errs, fmt.Sprintf("metrics[%d].", i), item, metricRequired)
	}
	if err := errs.Err(); err != nil {
		return cfg, err
	}
	if err := json.Unmarshal(body, &cfg); err != nil {
		return cfg, validate.DecodeError(err)
	}
	return cfg, nil
}

// DecodeMetric reads a MetricDefinition body of POST /v1/metrics, where
// the server mints metric_version.
func DecodeMetric(body []byte) (Metric, error) {
	var m Metric
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return m, validate.DecodeError(err)
	}
	var errs validate.Errors
	requireFields(&errs, "", top, metricRequiredPOST)
	if err := errs.Err(); err != nil {
		return m, err
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return m, validate.DecodeError(err)
	}
	return m, nil
}

func requireFields(errs *validate.Errors, prefix string, obj map[string]json.RawMessage, names []string) {
	for _, n := range names {
		v, ok := obj[n]
		switch {
		case !ok:
			errs.Add(prefix+n, "is required")
		case bytes.Equal(bytes.TrimSpace(v), []byte("null")):
			errs.Add(prefix+n, "is required and must not be null")
		}
	}
}

// objects returns the items of a JSON array that are objects; other
// shapes are left to the typed decode, which names them.
func objects(raw json.RawMessage) []map[string]json.RawMessage {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	out := make([]map[string]json.RawMessage, len(items))
	for i, it := range items {
		_ = json.Unmarshal(it, &out[i]) // a non-object item stays nil: no field is present
	}
	return out
}
