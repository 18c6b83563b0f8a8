// Package metrics knows which events feed a metric: the built-in catalogue
// of LLM and business metrics, the org-wide shared metric definitions
// (versioned, stored in shared_metrics), and Resolve, which turns the
// metrics of an experiment config into complete definitions at the right
// versions for the results pipeline.
package metrics
