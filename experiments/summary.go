package experiments

import "github.com/expd/expd/bucketing"

// Summary is the before/after state of an experiment in its audit entries:
// enough to see what changed without copying prompts into the log.
type Summary struct {
	Version        int               `json:"version"`
	Name           string            `json:"name"`
	Status         string            `json:"status"`
	ShippedVariant string            `json:"shipped_variant,omitempty"`
	Allocation     []bucketing.Slice `json:"allocation"`
	Metrics        []string          `json:"metrics"`
}

func summarize(e Experiment) Summary {
	cfg := e.Config
	s := Summary{Version: e.Version, Name: cfg.Name, Status: e.Status, ShippedVariant: cfg.ShippedVariant, Allocation: cfg.Allocation, Metrics: make([]string, len(cfg.Metrics))}
	for i, m := range cfg.Metrics {
		s.Metrics[i] = m.Name
	}
	return s
}
