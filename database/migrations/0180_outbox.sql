-- The outbox of announcements and lifecycle signals (issue 14,
-- docs/webhooks.md "The outbox", docs/lifecycle.md).
--
-- outbound_events (owner: package outbound): every event announcing a
-- change (experiment.started|stopped|shipped, guardrail.breached,
-- srm.failed) is written in the transaction of the change, so the change
-- and the promise to announce it commit together. sent_at is set once a
-- DeliverEvent workflow under the event id exists (started now, or found
-- started); rows still NULL are delivered by the periodic reconcile
-- (workflows.Redrive) and purged seven days after they were sent. data is
-- TEXT, not JSONB: it is delivered byte for byte as the announcer wrote it.
CREATE TABLE outbound_events (
    id TEXT PRIMARY KEY,
    org_id {{uuid}} NOT NULL REFERENCES orgs(id),
    experiment_id TEXT NOT NULL DEFAULT '',
    type TEXT NOT NULL,
    occurred_at {{timestamp}} NOT NULL,
    data TEXT NOT NULL,
    created_at {{timestamp}} NOT NULL,
    sent_at {{timestamp}}
);
CREATE INDEX outbound_events_pending ON outbound_events (created_at, id) WHERE sent_at IS NULL;
CREATE INDEX outbound_events_sent ON outbound_events (sent_at) WHERE sent_at IS NOT NULL;

-- experiments.signal_pending_since (owner: package experiments): set in
-- the transaction of a change after which the experiment's lifecycle
-- workflow has a scheduled step to arm (scheduled with start_at, running
-- with stop_at), cleared once the workflow was signalled at that version.
-- NULL: nothing is owed.
ALTER TABLE experiments ADD COLUMN signal_pending_since {{timestamp}};
CREATE INDEX experiments_signal_pending ON experiments (id) WHERE signal_pending_since IS NOT NULL;
