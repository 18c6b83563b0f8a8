-- Append-only audit log (issue 14, docs/lifecycle.md): one row per
-- recorded action of an org. Only the audit package writes it and it never
-- updates or deletes a row. dedup_key makes a retried system action (a
-- Temporal activity run twice) record once.
CREATE TABLE audit_log (
    id {{uuid}} PRIMARY KEY,
    org_id {{uuid}} NOT NULL REFERENCES orgs(id),
    experiment_id TEXT NOT NULL DEFAULT '',
    action TEXT NOT NULL,
    actor TEXT NOT NULL,
    workflow_id TEXT NOT NULL DEFAULT '',
    summary TEXT NOT NULL DEFAULT '',
    before_state {{json}},
    after_state {{json}},
    dedup_key TEXT,
    created_at {{timestamp}} NOT NULL
);
CREATE UNIQUE INDEX audit_log_dedup ON audit_log (org_id, dedup_key) WHERE dedup_key IS NOT NULL;
CREATE INDEX audit_log_org_time ON audit_log (org_id, created_at, id);
CREATE INDEX audit_log_experiment ON audit_log (org_id, experiment_id, created_at, id);
