-- Issue 28: online evaluators (docs/quality.md "Evaluators"), owned by
-- package evaluators. spec is the evaluator as the API shows it (kind,
-- score, sampling, budget, judge endpoint without its key, template,
-- range, check); api_key is the judge's key sealed with EXPD_SECRETS_KEY
-- (package secrets: "v1.<key id>.<AES-GCM>", bound to the row's id), ''
-- for code evaluators. version rises with every edit and every score
-- records it. A deleted evaluator keeps its row (deleted_at) so the
-- scores and evaluations that name it stay explained. Two live
-- evaluators of one kind may not write the same score name: they would
-- replace each other's scores (key call, name, source).
CREATE TABLE evaluators (
    id {{uuid}} PRIMARY KEY,
    org_id {{uuid}} NOT NULL REFERENCES orgs(id),
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('llm_judge', 'code')),
    score TEXT NOT NULL,
    spec {{json}} NOT NULL,
    api_key TEXT NOT NULL DEFAULT '',
    version INTEGER NOT NULL,
    created_by TEXT NOT NULL DEFAULT '',
    created_at {{timestamp}} NOT NULL,
    updated_at {{timestamp}} NOT NULL,
    deleted_at {{timestamp}}
);
CREATE INDEX evaluators_org ON evaluators (org_id, created_at, id);
CREATE UNIQUE INDEX evaluators_live_score ON evaluators (org_id, score, kind) WHERE deleted_at IS NULL;
