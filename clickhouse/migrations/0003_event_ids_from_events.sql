-- The claims are derived from the events: every insert into events_local
-- (the write path's, a copy's, one through the Distributed table) writes
-- their claims into event_ids_local on the same node, in the same INSERT,
-- after the events' part is written. So a group makes one insert per shard
-- instead of two, and the order the write path needs holds on the server:
-- an event is stored before its claim, never a claim without its event
-- (docs/scale.md, "Write path"). No POPULATE: the events stored before
-- this migration have their claims already. On the replicated form the
-- view is made on every replica (Migrate runs on every node): the replica
-- an insert reaches derives the claims, and replication copies both parts.
CREATE MATERIALIZED VIEW IF NOT EXISTS event_ids_mv TO event_ids_local
AS SELECT org_id, event_id, experiment_id, user_id, ts FROM events_local;
