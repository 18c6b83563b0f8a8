-- Issue 34: erasure of one user (docs/privacy.md "Erasure"), owned by
-- package erasure. One row per POST /v1/erasures. user_hash is the
-- HMAC-SHA256 of the user id under a key derived from EXPD_SECRETS_KEY:
-- the workflow id, the audit log and this row name the user by it.
-- user_id_sealed is the user id sealed under EXPD_SECRETS_KEY (bound to
-- the row's id) so that activities can read it without it entering the
-- workflow's history; it is cleared ('') when the erasure completes.
-- removed holds the rows removed per table. The row outlives the
-- erasure as the tombstone that ingest checks (erasures_org_hash), so
-- the user's events replayed later from a client's spill file are
-- dropped.
CREATE TABLE erasures (
    id {{uuid}} PRIMARY KEY,
    org_id {{uuid}} NOT NULL REFERENCES orgs(id),
    user_hash TEXT NOT NULL,
    user_id_sealed TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL CHECK (state IN ('running', 'completed')),
    removed {{json}} NOT NULL,
    requested_by TEXT NOT NULL DEFAULT '',
    created_at {{timestamp}} NOT NULL,
    completed_at {{timestamp}}
);
CREATE INDEX erasures_org_hash ON erasures (org_id, user_hash, created_at);
-- One running erasure per user: a second request while it runs answers
-- with the running one (its workflow id is the same).
CREATE UNIQUE INDEX erasures_running ON erasures (org_id, user_hash) WHERE state = 'running';
