package metrics

import (
	"strings"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/validate"
)

// metricPrefix is how the experiment validator names the probe's metric.
const metricPrefix = "metrics[0]."

// Validate checks a shared definition with the experiment config's own
// rules (so the two cannot drift), plus what a shared definition needs: a
// source, and a name that no built-in metric already has.
func Validate(m experiments.Metric) error {
	probe := experiments.Config{
		Name: "probe", Salt: "probe-salt", BucketCount: 1,
		Allocation: []bucketing.Slice{{Variant: "a", Weight: 1}},
		Metrics:    []experiments.Metric{m},
	}
	var errs validate.Errors
	for _, fe := range validate.Fields(probe.Validate()) {
		if field, ok := strings.CutPrefix(fe.Field, metricPrefix); ok {
			errs.Add(field, "%s", fe.Reason)
		}
	}
	if m.Source == nil {
		errs.Add("source", "is required for a shared metric: it defines which events feed it")
	}
	if _, ok := Builtin(m.Name); ok {
		errs.Add("name", "%q is a built-in metric; pick another name", m.Name)
	}
	return errs.Err()
}
