// Package results computes and stores experiment results (docs/architecture.md §6):
// the run keys (a nightly day or a manual instant), the analysis window,
// the per-user aggregation of every metric in one SQL GROUP BY (PostgreSQL
// and SQLite), the statistics of each metric and treatment arm, and the
// stored runs and result rows with the queries the API serves them from.
package results
