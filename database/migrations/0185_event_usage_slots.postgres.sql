-- Usage counters split by group-commit slot on PostgreSQL (issue 17,
-- docs/ingest.md "Monthly event allowance"). Concurrent group transactions
-- of one org all raised the same (org_id, month) row and so queued on its
-- lock from their usage update to their commit. An org without an
-- allowance now counts in the row of its group's slot (0 to the writer's
-- concurrency - 1); an org with one still counts in slot 0, the row whose
-- lock serializes its allowance check. The month's usage is the sum over
-- slots. SQLite (one writer) keeps one row per org and month.
ALTER TABLE event_usage ADD COLUMN slot SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE event_usage DROP CONSTRAINT event_usage_pkey;
ALTER TABLE event_usage ADD PRIMARY KEY (org_id, month, slot);
