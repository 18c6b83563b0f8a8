package testenv

import (
	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/metrics"
)

// ExperimentConfig is a valid config for the stores' own tests: control
// and treatment at 50 % each over 10,000 buckets, measuring the first
// built-in metric.
func ExperimentConfig(name string) experiments.Config {
	return experiments.Config{Name: name, Salt: "salt-for-" + name, BucketCount: 10000,
		Allocation: []bucketing.Slice{{Variant: "control", Weight: 50}, {Variant: "treatment", Weight: 50}},
		Metrics:    metrics.Builtins()[:1]}
}
