-- The one events table (docs/architecture.md §4) and the assignment pins (§5).
CREATE TABLE events (
    org_id {{uuid}} NOT NULL,
    event_id TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('exposure', 'model_call', 'business_event')),
    experiment_id {{uuid}} NOT NULL,
    user_id TEXT NOT NULL,
    variant TEXT NOT NULL DEFAULT '',
    ts {{timestamp}} NOT NULL,
    received_at {{timestamp}} NOT NULL,
    config_version BIGINT,
    model TEXT,
    latency_ms {{float}},
    input_tokens BIGINT,
    output_tokens BIGINT,
    total_tokens BIGINT,
    cost_usd {{float}},
    time_to_first_token_ms {{float}},
    error TEXT,
    business_metric TEXT,
    value {{float}},
    prompt TEXT,
    response TEXT,
    source TEXT NOT NULL DEFAULT 'api',
    PRIMARY KEY (org_id, event_id)
);
CREATE INDEX events_experiment_ts ON events (experiment_id, ts);
CREATE INDEX events_org_ts ON events (org_id, ts);

-- First server-side assignment or first exposure pins (experiment, user).
CREATE TABLE assignments (
    org_id {{uuid}} NOT NULL,
    experiment_id {{uuid}} NOT NULL,
    user_id TEXT NOT NULL,
    variant TEXT NOT NULL,
    source TEXT NOT NULL,
    created_at {{timestamp}} NOT NULL,
    PRIMARY KEY (experiment_id, user_id)
);
