-- Issue 27 point 2: score metrics (docs/quality.md, "Score metrics").
-- Each model call of a run looks up its score by the primary key
-- (org_id, call_id, name[, source]). scores_org_name_ts also matched that
-- lookup's leading equalities (org_id, name), and a planner without
-- statistics on a new scores table took it, reading every score of the
-- name once per call (a manual run right after a load took minutes on
-- PostgreSQL). The per-run orphan count, the one reader of a time index,
-- reads (org_id, ts) as well, so the index is on exactly that.
DROP INDEX scores_org_name_ts;
CREATE INDEX scores_org_ts ON scores (org_id, ts);
