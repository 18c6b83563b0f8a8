// Package ingest is the write path of events: it validates the wire events
// of POST /v1/events, the NDJSON import and signed business events, and
// stores them with a group-commit writer that merges concurrent requests
// into one transaction (COPY into a staging table then INSERT ... ON
// CONFLICT DO NOTHING on PostgreSQL, multi-row INSERT on SQLite). A caller
// learns that its events are stored only after that transaction commits.
// It also keeps the per-org monthly usage counters that the plan's event
// allowance is checked against, the business-event signing secrets, and
// the read-back of exposures for the traffic timeline. EventStore
// (eventstore.go) is the events store outside the group commit: insert
// with dedup, reads, the retention purge and a user's erasure, with
// SQLEvents its implementation on expd's own database.
package ingest
