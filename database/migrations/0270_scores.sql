-- Issue 27: scores of model calls (docs/quality.md), owned by package
-- scores. One row per (org, call, name, source): a later score of the
-- same key replaces the row (upsert, the later ts wins, ties by arrival).
-- call_id is the event_id of a model call; it is not a foreign key, since
-- a score may arrive before its call (and a call of another org must be
-- indistinguishable from an unknown one). The primary key serves the
-- analysis join from a model call to its scores; scores_org_name_ts the
-- per-run count of orphans (scores whose call never arrived).
CREATE TABLE scores (
    org_id {{uuid}} NOT NULL,
    call_id TEXT NOT NULL,
    name TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('human', 'judge', 'code')),
    value {{float}} NOT NULL,
    ts {{timestamp}} NOT NULL,
    received_at {{timestamp}} NOT NULL,
    comment TEXT,
    evaluator TEXT,
    evaluator_version TEXT,
    judge_model TEXT,
    PRIMARY KEY (org_id, call_id, name, source)
);
CREATE INDEX scores_org_name_ts ON scores (org_id, name, ts);
