// Package experiments owns the experiment config: its wire shape
// (ExperimentConfig of the spec, docs/architecture.md §5), its validation, and the
// versioned storage rules: create mints version 1 with a fresh bucket map,
// update mints version n+1 with the minimal-move map, salt and bucket_count
// never change, stored versions are never rewritten, and every change
// raises the org's config_version.
package experiments
