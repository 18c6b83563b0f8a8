-- Issue 33: every held-out share a holdout has had, and since when (owned
-- by package holdouts). A change of a holdout's percent changes who enters
-- the experiments in its scope, so it starts a phase in each of them
-- (package phases; docs/results.md, "Phases"). Existing holdouts get their
-- present percent as version 1, since their creation.
CREATE TABLE holdout_versions (
    holdout_id {{uuid}} NOT NULL REFERENCES holdouts(id),
    version INTEGER NOT NULL,
    org_id {{uuid}} NOT NULL REFERENCES orgs(id),
    percent {{float}} NOT NULL,
    created_at {{timestamp}} NOT NULL,
    PRIMARY KEY (holdout_id, version)
);
CREATE INDEX holdout_versions_org ON holdout_versions (org_id, created_at);
INSERT INTO holdout_versions (holdout_id, version, org_id, percent, created_at)
SELECT id, 1, org_id, percent, created_at FROM holdouts;
