-- Outbound webhooks (issue 14, docs/webhooks.md); the outbound package owns
-- both tables. An endpoint's secret is kept as issued because signing
-- (HMAC-SHA256, Standard Webhooks) needs it; the API shows it once and the
-- delivery activity reads it by endpoint id, so it never enters a workflow
-- history or a log. A deleted endpoint keeps its row (deleted_at) so its
-- deliveries stay readable for the audit trail; it receives nothing more.
CREATE TABLE webhook_endpoints (
    id {{uuid}} PRIMARY KEY,
    org_id {{uuid}} NOT NULL REFERENCES orgs(id),
    url TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    event_types {{json}},
    secret TEXT NOT NULL,
    created_by TEXT NOT NULL DEFAULT '',
    created_at {{timestamp}} NOT NULL,
    deleted_at {{timestamp}}
);
CREATE INDEX webhook_endpoints_org ON webhook_endpoints (org_id, created_at, id);

-- One row per delivery attempt. attempt is the Temporal activity attempt
-- (1-based); the unique key makes a re-recorded attempt a no-op.
CREATE TABLE webhook_deliveries (
    id {{uuid}} PRIMARY KEY,
    org_id {{uuid}} NOT NULL REFERENCES orgs(id),
    endpoint_id {{uuid}} NOT NULL REFERENCES webhook_endpoints(id),
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    status_code INTEGER NOT NULL DEFAULT 0,
    error TEXT NOT NULL DEFAULT '',
    duration_ms BIGINT NOT NULL DEFAULT 0,
    attempted_at {{timestamp}} NOT NULL
);
CREATE UNIQUE INDEX webhook_deliveries_attempt ON webhook_deliveries (endpoint_id, event_id, attempt);
CREATE INDEX webhook_deliveries_endpoint_time ON webhook_deliveries (endpoint_id, attempted_at, id);
