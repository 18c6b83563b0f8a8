-- The events, their id claims and the scores beside them, on every node.
-- Timestamps are Int64 microseconds since the epoch (UTC): DateTime64 needs
-- ClickHouse 20.1, and the tested 18.16 lacks it. Partitions are UTC days
-- (intDiv(ts, 86400000000) is the day number), so a day is dropped whole.
--
-- events_local: ReplacingMergeTree on (org_id, experiment_id, user_id,
-- event_id): a run reads one experiment's users in key order, and a
-- duplicate of an event (a retried write) collapses on merge and reads
-- once under FINAL. Sharded by user, so a user's events sit on one shard
-- and per-user aggregation is local:
-- distributed: events by cityHash64(org_id, user_id)
CREATE TABLE IF NOT EXISTS events_local (
  org_id String,
  event_id String,
  type String,
  experiment_id String,
  user_id String,
  variant String,
  ts Int64,
  received_at Int64,
  config_version Nullable(Int64),
  model Nullable(String),
  latency_ms Nullable(Float64),
  input_tokens Nullable(Int64),
  output_tokens Nullable(Int64),
  total_tokens Nullable(Int64),
  cost_usd Nullable(Float64),
  time_to_first_token_ms Nullable(Float64),
  error Nullable(String),
  prompt Nullable(String),
  response Nullable(String),
  business_metric Nullable(String),
  value Nullable(Float64),
  source String
) ENGINE = ReplacingMergeTree()
PARTITION BY intDiv(ts, 86400000000)
ORDER BY (org_id, experiment_id, user_id, event_id);

-- event_ids_local: the claim of each stored event id, keyed for the write
-- path's "already stored?" probe and ReadCall's lookup; written after the
-- event itself (docs/scale.md, "ClickHouse: the write path").
-- distributed: event_ids by cityHash64(org_id, user_id)
CREATE TABLE IF NOT EXISTS event_ids_local (
  org_id String,
  event_id String,
  experiment_id String,
  user_id String,
  ts Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY intDiv(ts, 86400000000)
ORDER BY (org_id, event_id);

-- scores_local: one score per (org, call, name, source); the write path
-- inserts a score only when it wins over the stored one, so the last
-- inserted is the one kept (ReplacingMergeTree without a version). One
-- partition: a replacement collapses only within a partition, and a
-- later score of a call may carry another day.
-- distributed: scores by cityHash64(org_id, call_id)
CREATE TABLE IF NOT EXISTS scores_local (
  org_id String,
  call_id String,
  name String,
  source String,
  value Float64,
  ts Int64,
  received_at Int64,
  comment Nullable(String),
  evaluator Nullable(String),
  evaluator_version Nullable(String),
  judge_model Nullable(String)
) ENGINE = ReplacingMergeTree()
ORDER BY (org_id, call_id, name, source);
