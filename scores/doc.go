// Package scores owns the scores table: quality scores (a thumbs-up, a
// rating, a judge's grade) attached to model calls by their event_id
// (docs/quality.md). It decodes and validates scores as POST /v1/scores
// takes them and writes them with an upsert, one row per (org, call,
// name, source). The write path's group transaction (package ingest)
// calls it, so scores share the events' allowance counting and group
// commit.
package scores
