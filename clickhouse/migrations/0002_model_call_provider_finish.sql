-- Two model-call fields added after 0001 (vocab.ModelCallFields; the
-- relational engines' migration 0350): the provider that served a call
-- and its choices' finish reasons, comma-separated. An ALTER of a local
-- table is repeated on its Distributed table on a cluster, and skipped
-- where the column exists (18.16 has no ADD COLUMN IF NOT EXISTS), so an
-- interrupted migration is finished by the next.
ALTER TABLE events_local ADD COLUMN provider Nullable(String);
ALTER TABLE events_local ADD COLUMN finish_reasons Nullable(String);
