-- Org management tokens (expd_mt_...): credentials for scripts and CI on the
-- dashboard routes. Only the SHA-256 hash is stored.
CREATE TABLE management_tokens (
    id {{uuid}} PRIMARY KEY,
    org_id {{uuid}} NOT NULL REFERENCES orgs(id),
    name TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('admin', 'member')),
    token_hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    created_by TEXT NOT NULL DEFAULT '',
    created_at {{timestamp}} NOT NULL,
    expires_at {{timestamp}},
    last_used_at {{timestamp}},
    revoked_at {{timestamp}}
);
CREATE INDEX management_tokens_org ON management_tokens (org_id, created_at);
