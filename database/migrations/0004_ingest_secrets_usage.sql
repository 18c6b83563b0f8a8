-- Per-org signing secrets of the business-event webhook (Standard Webhooks,
-- docs/architecture.md §8). The secret is kept as issued because HMAC verification
-- needs it; it is shown once by the API and never read back through it.
CREATE TABLE business_event_secrets (
    org_id {{uuid}} PRIMARY KEY REFERENCES orgs(id),
    secret TEXT NOT NULL,
    created_at {{timestamp}} NOT NULL
);

-- Events stored per org and calendar month (UTC, 'YYYY-MM'), raised in the
-- same transaction as the events themselves; the plan's
-- monthly_event_allowance is checked against it.
CREATE TABLE event_usage (
    org_id {{uuid}} NOT NULL REFERENCES orgs(id),
    month TEXT NOT NULL,
    events BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (org_id, month)
);
