-- Issue 33: holdouts (docs/targeting.md "Holdouts"), owned by package
-- holdouts. A holdout keeps percent % of users (by its own salt and bucket
-- space) out of every experiment in its scope: the experiments of layer_id,
-- or every experiment of the org when layer_id is null. metrics are what
-- its results compare (held-out users against exposed ones).
CREATE TABLE holdouts (
    id {{uuid}} PRIMARY KEY,
    org_id {{uuid}} NOT NULL REFERENCES orgs(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    salt TEXT NOT NULL,
    bucket_count INTEGER NOT NULL,
    percent {{float}} NOT NULL,
    layer_id {{uuid}} REFERENCES layers(id),
    metrics {{json}} NOT NULL,
    created_by TEXT NOT NULL DEFAULT '',
    created_at {{timestamp}} NOT NULL,
    updated_at {{timestamp}} NOT NULL
);
CREATE UNIQUE INDEX holdouts_org_name ON holdouts (org_id, name);
