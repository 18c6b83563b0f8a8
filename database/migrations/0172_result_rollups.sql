-- Issue 17: incremental daily results (docs/results.md, "Incremental
-- results").
--
-- Per (experiment, UTC day, user) partial aggregates: the row with expr ''
-- holds the user's first exposure of the day (by ts, event_id) and the
-- least and greatest variant exposed that day; every other row one
-- metric expression's exact sum and count over the user's events of the
-- day (s_all, n_all) and over those at or after the day's first exposure
-- (s_after, n_after). Sums are NUMERIC: exact on PostgreSQL; on SQLite the
-- column holds expd_exact_sum's "a/b" text.
CREATE TABLE result_rollups (
    experiment_id {{uuid}} NOT NULL,
    day TEXT NOT NULL,
    user_id TEXT NOT NULL,
    expr TEXT NOT NULL,
    org_id {{uuid}} NOT NULL,
    first_ts {{timestamp}},
    first_event_id TEXT,
    variant TEXT,
    vmin TEXT,
    vmax TEXT,
    s_all NUMERIC,
    n_all BIGINT NOT NULL,
    s_after NUMERIC,
    n_after BIGINT NOT NULL,
    PRIMARY KEY (experiment_id, day, user_id, expr)
);

-- One row per rolled-up day: what it was computed with (the exposure
-- lower bound, the expressions, the late-event mark it saw), so a run
-- knows whether the day can be reused or must be rolled up again.
CREATE TABLE result_rollup_days (
    experiment_id {{uuid}} NOT NULL,
    day TEXT NOT NULL,
    org_id {{uuid}} NOT NULL,
    exposures_from {{timestamp}} NOT NULL,
    exprs TEXT NOT NULL,
    mark BIGINT NOT NULL,
    rolled_at {{timestamp}} NOT NULL,
    PRIMARY KEY (experiment_id, day)
);
CREATE INDEX result_rollup_days_org_day ON result_rollup_days (org_id, day);

-- Late events (ingest/daymarks.go): the write path raises an org's day's
-- version whenever it stores events of a day before the one they are
-- received on; a rolled-up day whose mark is behind is rolled up again.
CREATE TABLE event_day_marks (
    org_id {{uuid}} NOT NULL,
    day TEXT NOT NULL,
    version BIGINT NOT NULL,
    PRIMARY KEY (org_id, day)
);
