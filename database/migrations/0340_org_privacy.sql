-- Issue 34: an org's payload policy (docs/privacy.md), owned by package
-- privacy. No row: the defaults (store, no custom pattern, the plan's
-- retention). custom_patterns is [{name, regex, placeholder}] (RE2,
-- checked on PUT /v1/privacy); retention_days, when set, is shorter than
-- the plan's and cuts retention and the results window as the plan's
-- does; hash_key is the org's key of the hash policy sealed with
-- EXPD_SECRETS_KEY ('' until needed).
CREATE TABLE org_privacy (
    org_id {{uuid}} PRIMARY KEY REFERENCES orgs(id),
    payload_policy TEXT NOT NULL DEFAULT 'store' CHECK (payload_policy IN ('store', 'redact', 'hash', 'drop')),
    custom_patterns {{json}} NOT NULL DEFAULT '[]',
    retention_days INTEGER CHECK (retention_days >= 1),
    hash_key TEXT NOT NULL DEFAULT '',
    updated_at {{timestamp}},
    updated_by TEXT NOT NULL DEFAULT ''
);
