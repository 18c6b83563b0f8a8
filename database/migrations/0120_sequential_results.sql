-- Issue 12: always-valid inference, CUPED, quantile and ratio metrics,
-- crossover users, non-inferiority (docs/results.md "Row").
-- sequential says whether the row's headline numbers are always-valid;
-- analysis holds the rest of the row's issue-12 fields (the other mode's
-- numbers, CUPED, crossover users, warnings, non-inferiority). Rows written
-- before this migration read as fixed-horizon rows without those fields.
ALTER TABLE results ADD COLUMN sequential BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE results ADD COLUMN analysis {{json}};

-- CUPED's pre-period reads each exposed user's events of the org before
-- their first exposure, whatever the experiment.
CREATE INDEX events_org_user_ts ON events (org_id, user_id, ts);
