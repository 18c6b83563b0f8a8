-- Events partitioned by UTC day on PostgreSQL (issue 17, docs/partitions.md).
-- SQLite (dev) keeps the one table of 0002.
--
-- A partitioned table's unique index must contain the partition key, so
-- (org_id, event_id) can no longer be the events table's primary key. The
-- exact rule moves to event_ids: one narrow row per stored event, keyed
-- (org_id, event_id), written in the same transaction as the event. An id
-- is stored at most once per org whatever timestamp a retry carries.
--
-- The whole move runs in this migration's one transaction: either every
-- row is in the new table (and in event_ids) or nothing changed.

ALTER TABLE events RENAME TO events_unpartitioned;

CREATE TABLE events (LIKE events_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
PARTITION BY RANGE (ts);

-- The catch-all: a row whose day has no partition (a backfill older than
-- the created range) lands here; partition maintenance moves it into its
-- day's partition when it creates that partition.
CREATE TABLE events_default PARTITION OF events DEFAULT;

CREATE TABLE event_ids (
    org_id UUID NOT NULL,
    event_id TEXT NOT NULL,
    ts TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (org_id, event_id)
);

-- expd_ensure_event_partition creates the partition of one UTC day unless
-- it exists, moving the day's rows out of events_default in the same
-- transaction (ATTACH refuses a range the default still holds rows of).
-- Returns true when it created the partition. The one definition serves
-- this migration and the partition maintenance workflow.
CREATE FUNCTION expd_ensure_event_partition(d date) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    part text := 'events_p' || to_char(d, 'YYYYMMDD');
    lo timestamptz := d::timestamp AT TIME ZONE 'UTC';
    hi timestamptz := (d + 1)::timestamp AT TIME ZONE 'UTC';
BEGIN
    IF to_regclass(part) IS NOT NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('CREATE TABLE %I (LIKE events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part);
    -- The constraint lets ATTACH skip scanning the new table.
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (ts >= %L AND ts < %L)', part, part || '_range', lo, hi);
    EXECUTE format('WITH moved AS (DELETE FROM events_default WHERE ts >= %L AND ts < %L RETURNING *) INSERT INTO %I SELECT * FROM moved', lo, hi, part);
    EXECUTE format('ALTER TABLE events ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', part, lo, hi);
    RETURN true;
END
$$;

-- A partition for every day the old table has rows of, and for yesterday
-- through a week ahead, so live traffic never lands in the default.
DO $$
DECLARE
    d date;
    first_day date;
    last_day date;
BEGIN
    SELECT min(ts AT TIME ZONE 'UTC')::date, max(ts AT TIME ZONE 'UTC')::date INTO first_day, last_day FROM events_unpartitioned;
    first_day := least(coalesce(first_day, current_date), (now() AT TIME ZONE 'UTC')::date - 1);
    last_day := greatest(coalesce(last_day, current_date), (now() AT TIME ZONE 'UTC')::date + 7);
    d := first_day;
    WHILE d <= last_day LOOP
        PERFORM expd_ensure_event_partition(d);
        d := d + 1;
    END LOOP;
END
$$;

INSERT INTO events SELECT * FROM events_unpartitioned;
INSERT INTO event_ids (org_id, event_id, ts) SELECT org_id, event_id, ts FROM events_unpartitioned;
DROP TABLE events_unpartitioned;

-- Created after the copy (faster than maintaining them row by row); each
-- is a partitioned index, built on every partition and on every
-- partition attached later.
CREATE INDEX events_experiment_ts ON events (experiment_id, ts);
CREATE INDEX events_org_ts ON events (org_id, ts);
CREATE INDEX events_experiment_user_ts ON events (experiment_id, user_id, ts);
