-- Identity-webhook ordering and processed payment events
-- (docs/identity.md, docs/billing.md).

-- The identity provider's time (Unix ms) of the last change applied to the
-- row: a change no newer than it is stale and skipped, so out-of-order and
-- replayed webhooks end in the newest state. NULL until a webhook wrote the
-- row (a row made from a session token or as a placeholder).
ALTER TABLE orgs ADD COLUMN clerk_changed_ms BIGINT;
ALTER TABLE users ADD COLUMN clerk_changed_ms BIGINT;
ALTER TABLE memberships ADD COLUMN clerk_changed_ms BIGINT;

-- One row per payment-provider event applied (or found stale), written in
-- the same transaction as the org's plan: an event is applied at most once,
-- even after its workflow id has left Temporal's retention.
CREATE TABLE payment_events (
    event_id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    org_id {{uuid}},
    event_created {{timestamp}} NOT NULL,
    outcome TEXT NOT NULL,
    processed_at {{timestamp}} NOT NULL
);
CREATE INDEX payment_events_org ON payment_events (org_id, event_created);
