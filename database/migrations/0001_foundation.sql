-- Orgs, identity-provider users and memberships, experiments with their
-- append-only config versions, API keys and their audit trail.
CREATE TABLE orgs (
    id {{uuid}} PRIMARY KEY,
    clerk_org_id TEXT UNIQUE,
    name TEXT NOT NULL DEFAULT '',
    slug TEXT NOT NULL DEFAULT '',
    plan TEXT NOT NULL DEFAULT 'free',
    config_version BIGINT NOT NULL DEFAULT 0,
    stripe_customer_id TEXT UNIQUE,
    stripe_subscription_id TEXT,
    subscription_status TEXT NOT NULL DEFAULT '',
    plan_event_at {{timestamp}},
    deleted_at {{timestamp}},
    created_at {{timestamp}} NOT NULL,
    updated_at {{timestamp}} NOT NULL
);

CREATE TABLE users (
    id {{uuid}} PRIMARY KEY,
    clerk_user_id TEXT NOT NULL UNIQUE,
    email TEXT NOT NULL DEFAULT '',
    first_name TEXT NOT NULL DEFAULT '',
    last_name TEXT NOT NULL DEFAULT '',
    deleted_at {{timestamp}},
    created_at {{timestamp}} NOT NULL,
    updated_at {{timestamp}} NOT NULL
);

CREATE TABLE memberships (
    id {{uuid}} PRIMARY KEY,
    org_id {{uuid}} NOT NULL REFERENCES orgs(id),
    user_id {{uuid}} NOT NULL REFERENCES users(id),
    clerk_membership_id TEXT UNIQUE,
    role TEXT NOT NULL DEFAULT '',
    deleted_at {{timestamp}},
    created_at {{timestamp}} NOT NULL,
    updated_at {{timestamp}} NOT NULL,
    UNIQUE (org_id, user_id)
);

CREATE TABLE experiments (
    id {{uuid}} PRIMARY KEY,
    org_id {{uuid}} NOT NULL REFERENCES orgs(id),
    name TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'running',
    salt TEXT NOT NULL,
    bucket_count BIGINT NOT NULL,
    current_version INTEGER NOT NULL,
    created_at {{timestamp}} NOT NULL,
    updated_at {{timestamp}} NOT NULL,
    UNIQUE (org_id, name)
);

CREATE TABLE experiment_versions (
    id {{uuid}} PRIMARY KEY,
    experiment_id {{uuid}} NOT NULL REFERENCES experiments(id),
    org_id {{uuid}} NOT NULL REFERENCES orgs(id),
    version INTEGER NOT NULL,
    config {{json}} NOT NULL,
    bucket_map {{json}} NOT NULL,
    created_by TEXT NOT NULL DEFAULT '',
    created_at {{timestamp}} NOT NULL,
    UNIQUE (experiment_id, version)
);

CREATE TABLE api_keys (
    id {{uuid}} PRIMARY KEY,
    org_id {{uuid}} NOT NULL REFERENCES orgs(id),
    scope TEXT NOT NULL CHECK (scope IN ('publishable', 'secret')),
    key_hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    publishable TEXT,
    created_at {{timestamp}} NOT NULL,
    revoked_at {{timestamp}}
);
-- At most one live key per org and scope: concurrent rotations cannot
-- leave two valid keys behind.
CREATE UNIQUE INDEX api_keys_one_live ON api_keys (org_id, scope) WHERE revoked_at IS NULL;

CREATE TABLE key_audit (
    id {{uuid}} PRIMARY KEY,
    org_id {{uuid}} NOT NULL REFERENCES orgs(id),
    scope TEXT NOT NULL,
    action TEXT NOT NULL,
    key_id {{uuid}} NOT NULL,
    actor TEXT NOT NULL DEFAULT '',
    created_at {{timestamp}} NOT NULL
);
CREATE INDEX key_audit_org ON key_audit (org_id, created_at);
