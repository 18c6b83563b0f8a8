-- Issue 12 (benchmark): CUPED's pre-period sums are stored with the
-- rollup of the day a user was exposed on (docs/results.md, "Incremental
-- results"), so a run reads them from there instead of probing the org's
-- events once per exposed user and day partition. s_pre and n_pre are
-- the exact sum and count of the expression over the user's org events in
-- the PrePeriodDays before that day's first exposure; rows of users
-- without one are 0 and NULL. Days rolled up before this migration lack
-- the pre-period keys in result_rollup_days.exprs and are rolled up again
-- by their next run that needs them.
ALTER TABLE result_rollups ADD COLUMN s_pre NUMERIC;
ALTER TABLE result_rollups ADD COLUMN n_pre BIGINT NOT NULL DEFAULT 0;
