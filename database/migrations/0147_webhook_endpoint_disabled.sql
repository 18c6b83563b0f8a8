-- An endpoint whose receiver answered 410 Gone is disabled (issue 14,
-- docs/webhooks.md): it receives nothing more, the GET routes show when
-- and why, and the audit log records it. Unlike a deletion it was not the
-- org's decision, so the row says so apart from deleted_at.
ALTER TABLE webhook_endpoints ADD COLUMN disabled_at {{timestamp}};
ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason TEXT NOT NULL DEFAULT '';
