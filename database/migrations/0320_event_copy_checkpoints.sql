-- The checkpoint of `expd migrate --copy-events-to-clickhouse` (package
-- eventcopy): per kind of row (events, scores) and target (the ClickHouse
-- database copied to), the key of the last batch copied, so an
-- interrupted copy resumes after it instead of starting again.
CREATE TABLE event_copy_checkpoints (
  kind TEXT NOT NULL,
  target TEXT NOT NULL,
  last_key {{json}} NOT NULL,
  copied BIGINT NOT NULL,
  updated_at {{timestamp}} NOT NULL,
  PRIMARY KEY (kind, target)
);
