-- When an experiment shipped (issue 14, docs/lifecycle.md): a results run
-- analyses exposures and events up to this instant only, since what
-- follows is one variant for everyone, not an experiment. Set by the ship
-- transition; shipping is final, so it never changes. Experiments shipped
-- before this column take the instant of their experiment.shipped audit
-- entry (recorded by the same transaction), else their last update.
ALTER TABLE experiments ADD COLUMN shipped_at {{timestamp}};
UPDATE experiments SET shipped_at = COALESCE(
    (SELECT MIN(a.created_at) FROM audit_log a
      WHERE a.org_id = experiments.org_id AND a.experiment_id = CAST(experiments.id AS TEXT) AND a.action = 'experiment.shipped'),
    updated_at)
WHERE status = 'shipped';
