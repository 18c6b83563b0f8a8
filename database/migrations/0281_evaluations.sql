-- Issue 28: one row per (evaluator, call) an evaluator evaluated, owned
-- by package evaluators: the score it wrote (status 'scored', the score
-- itself is in scores) or why it failed (status 'failed': unparseable or
-- out-of-range verdict, refused request, or a judge still unavailable
-- after the retries). The key makes an evaluation happen once per call
-- whatever the retries, replays and restarts. day (UTC, YYYY-MM-DD) and
-- cost_usd are the daily budget's ledger.
CREATE TABLE evaluations (
    evaluator_id {{uuid}} NOT NULL REFERENCES evaluators(id),
    call_id TEXT NOT NULL,
    org_id {{uuid}} NOT NULL,
    evaluator_version INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('scored', 'failed')),
    score {{float}},
    reason TEXT NOT NULL DEFAULT '',
    failure TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '',
    judge_model TEXT NOT NULL DEFAULT '',
    cost_usd {{float}} NOT NULL DEFAULT 0,
    day TEXT NOT NULL,
    evaluated_at {{timestamp}} NOT NULL,
    PRIMARY KEY (evaluator_id, call_id)
);
CREATE INDEX evaluations_day ON evaluations (evaluator_id, day);
CREATE INDEX evaluations_page ON evaluations (evaluator_id, evaluated_at, call_id);
