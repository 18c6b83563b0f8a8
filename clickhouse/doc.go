// Package clickhouse is the ClickHouse analytics engine: an events store
// (ingest.EventStore) and an aggregator (results.Aggregator) over events,
// their id claims and their scores in ClickHouse, on one node or sharded
// over a cluster (Distributed tables, sharded by org and user), while
// everything else stays in PostgreSQL (docs/scale.md, "Events on
// ClickHouse"). It owns the ClickHouse schema and its migrations
// (migrations/), applied on every node the cluster lists.
package clickhouse
