-- Results pipeline (architecture §6): one record per run, the result
-- rows of each run, comparisons staged between the analysis and publication
-- activities, and org-wide shared metric definitions.

-- The aggregation joins each exposed user to their own events: without
-- this index SQLite (which has no hash join) would scan all of the
-- experiment's events once per user.
CREATE INDEX events_experiment_user_ts ON events (experiment_id, user_id, ts);

-- One record per (experiment, computed_for): a nightly day (YYYY-MM-DD) or a
-- manual run (manual-<RFC 3339 instant>). window_end orders available_days.
CREATE TABLE result_runs (
    experiment_id {{uuid}} NOT NULL,
    computed_for TEXT NOT NULL,
    org_id {{uuid}} NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('nightly', 'manual')),
    workflow_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
    experiment_version INTEGER NOT NULL,
    window_start {{timestamp}} NOT NULL,
    window_end {{timestamp}} NOT NULL,
    window_days INTEGER NOT NULL,
    retention_truncated BOOLEAN NOT NULL,
    srm {{json}},
    row_count INTEGER NOT NULL DEFAULT 0,
    error TEXT NOT NULL DEFAULT '',
    started_at {{timestamp}} NOT NULL,
    finished_at {{timestamp}},
    PRIMARY KEY (experiment_id, computed_for)
);
CREATE INDEX result_runs_org_kind_end ON result_runs (org_id, kind, window_end);

-- One row per metric and treatment arm of a run, written by upsert.
CREATE TABLE results (
    experiment_id {{uuid}} NOT NULL,
    computed_for TEXT NOT NULL,
    metric TEXT NOT NULL,
    variant TEXT NOT NULL,
    org_id {{uuid}} NOT NULL,
    control_variant TEXT NOT NULL,
    metric_version INTEGER NOT NULL,
    category TEXT NOT NULL,
    kind TEXT NOT NULL,
    origin TEXT NOT NULL,
    test TEXT NOT NULL,
    statistic {{float}} NOT NULL,
    p_value {{float}} NOT NULL,
    p_value_fdr {{float}} NOT NULL,
    effect {{float}} NOT NULL,
    ci_low {{float}} NOT NULL,
    ci_high {{float}} NOT NULL,
    rel_lift {{float}},
    rel_ci_low {{float}},
    rel_ci_high {{float}},
    rel_undefined_reason TEXT NOT NULL DEFAULT '',
    n_control BIGINT NOT NULL,
    n_treatment BIGINT NOT NULL,
    srm_p {{float}} NOT NULL,
    permutations_used INTEGER NOT NULL,
    sample_cap_used BOOLEAN NOT NULL,
    window_days INTEGER NOT NULL,
    retention_truncated BOOLEAN NOT NULL,
    preliminary BOOLEAN NOT NULL,
    undefined TEXT NOT NULL DEFAULT '',
    distribution {{json}} NOT NULL,
    computed_at {{timestamp}} NOT NULL,
    PRIMARY KEY (experiment_id, computed_for, metric, variant)
);
CREATE INDEX results_org_nightly ON results (org_id, computed_for);

-- Comparisons of a run between analysis and publication: small rows, so
-- per-user data never has to travel through a workflow's history.
CREATE TABLE result_staging (
    experiment_id {{uuid}} NOT NULL,
    computed_for TEXT NOT NULL,
    metric TEXT NOT NULL,
    variant TEXT NOT NULL,
    payload {{json}} NOT NULL,
    PRIMARY KEY (experiment_id, computed_for, metric, variant)
);

-- Org-wide metric definitions; every change is a new metric_version.
CREATE TABLE shared_metrics (
    org_id {{uuid}} NOT NULL REFERENCES orgs(id),
    name TEXT NOT NULL,
    metric_version INTEGER NOT NULL,
    definition {{json}} NOT NULL,
    created_by TEXT NOT NULL DEFAULT '',
    created_at {{timestamp}} NOT NULL,
    PRIMARY KEY (org_id, name, metric_version)
);
