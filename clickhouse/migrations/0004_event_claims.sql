-- The claims move to event_claims_local, keyed for the write path's probe
-- of a group's ids (docs/scale.md, "The claim probe"). The probe asks
-- every partition of the org for random ids: with event_ids_local's day
-- partitions and 8,192-row granules it read about all of the org's
-- claims (a granule per id, a partition per day), a cost that grew with
-- the org's history. Here a partition is 30 days and a granule 256 rows,
-- so a probe reads about 256 rows per id and partition, whatever the
-- history; the primary index costs a mark per 256 claims in memory
-- (about 30 MB at 100 M claims). A day's claims go when no day of their
-- 30 days is left (Store.DropDay), so an id stays claimed a little past
-- its event, never less.
-- distributed: event_claims by cityHash64(org_id, user_id)
CREATE TABLE IF NOT EXISTS event_claims_local (
  org_id String,
  event_id String,
  experiment_id String,
  user_id String,
  ts Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY intDiv(ts, 2592000000000)
ORDER BY (org_id, event_id)
SETTINGS index_granularity = 256;

-- Derived from the events as event_ids_mv was (0003): from here on every
-- insert into events_local writes its claims into both tables until the
-- old view goes below, so no event is left without a claim.
CREATE MATERIALIZED VIEW IF NOT EXISTS event_claims_mv TO event_claims_local
AS SELECT org_id, event_id, experiment_id, user_id, ts FROM events_local;

-- The claims of the events stored before the view, derived again from
-- the events (a rerun after an interruption copies them again: the
-- copies collapse, and the probe reads ids, not counts).
INSERT INTO event_claims_local (org_id, event_id, experiment_id, user_id, ts)
SELECT org_id, event_id, experiment_id, user_id, ts FROM events_local;

DROP TABLE IF EXISTS event_ids_mv;

DROP TABLE IF EXISTS event_ids;

DROP TABLE IF EXISTS event_ids_local
