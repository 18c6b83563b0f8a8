package experiments

import "github.com/expd/expd/bucketing"

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
}

// Variant carries what the client library reads for a variant.
type Variant struct {
	Prompt    string         `json:"prompt,omitempty"`
	Variables map[string]any `json:"variables,omitempty"`
}

// Metric is a MetricDefinition. SharedOrgWide is a pointer so that a
// missing field is told apart from false: the spec makes it required.
type Metric struct {
	Name          string        `json:"name"`
	Kind          string        `json:"kind"`
	Category      string        `json:"category"`
	MethodDefault string        `json:"method_default"`
	MetricVersion int           `json:"metric_version"`
	SharedOrgWide *bool         `json:"shared_org_wide"`
	Source        *MetricSource `json:"source,omitempty"`
}

// MetricSource says which events feed a metric: an event type and one of
// its numeric fields, or a business metric name.
type MetricSource struct {
	EventType      string `json:"event_type"`
	Field          string `json:"field,omitempty"`
	BusinessMetric string `json:"business_metric,omitempty"`
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
	StatusRunning = "running"
	StatusStopped = "stopped"
)
