-- Issue 17: how many rollup rows a rolled-up day holds for how many events
-- of the experiment; a run reads the events instead when the rollups are
-- not smaller (docs/results.md, "Incremental results"). Days rolled up
-- before this count 0 and 0.
ALTER TABLE result_rollup_days ADD COLUMN rollup_rows BIGINT NOT NULL DEFAULT 0;
ALTER TABLE result_rollup_days ADD COLUMN event_count BIGINT NOT NULL DEFAULT 0;
