// Package models holds the relational schema of expd and nothing that
// queries it: the GORM row structs (api_key.go, event.go, experiment.go,
// org.go), the versioned SQL migrations that create the tables on
// PostgreSQL and SQLite (migrate.go, migrations/), opening a database for
// either (open.go), a fresh schema per test (schema.go), and the
// classification of driver errors (errors.go: IsUnavailable, ...).
//
// Queries live in each table's one owner package: orgs (orgs, payment
// events), keys (api_keys, key_audit), experiments (experiments,
// experiment_versions), metrics (shared_metrics), assignments (pins),
// ingest (events, usage, business_event_secrets), results (result_runs,
// results, result_staging).
// Every row that belongs to an org carries org_id, and every query is
// scoped by it. Internal ids are UUIDs; references to the identity
// provider live in clerk_-prefixed columns.
package models
