// Package database is expd's relational database, apart from its rows:
// opening PostgreSQL or SQLite (open.go), the versioned SQL migrations that
// create the tables on either (migrate.go, migrations/), a fresh schema per
// test (schema.go), the pgx query tracer (dbtrace.go) and the
// classification of driver errors (errors.go: IsUnavailable, ...).
//
// It holds no row types and no queries: each table's row struct and
// queries live in its one owner package: orgs (orgs, users, memberships,
// payment events), keys (api_keys, key_audit), mgmttokens
// (management_tokens), experiments (experiments, experiment_versions),
// metrics (shared_metrics), assignments (pins), ingest (events, usage,
// business_event_secrets), results (result_runs, results, result_staging),
// audit (audit_log), webhooks (endpoints, deliveries, the outbox),
// erasure (erasures).
// Every row that belongs to an org carries org_id, and every query is
// scoped by it. Internal ids are UUIDs; references to the identity
// provider live in clerk_-prefixed columns.
package database
