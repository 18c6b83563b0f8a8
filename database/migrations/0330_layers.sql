-- Issue 33: layers (docs/targeting.md "Layers"), owned by package layers.
-- A layer is a bucket space of its own (salt, bucket_count, both frozen)
-- that experiments share without overlapping: each experiment of a layer
-- holds a range of it, stored in its config (experiments.layer_id, 0331,
-- indexes who holds ranges of a layer).
CREATE TABLE layers (
    id {{uuid}} PRIMARY KEY,
    org_id {{uuid}} NOT NULL REFERENCES orgs(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    salt TEXT NOT NULL,
    bucket_count INTEGER NOT NULL,
    created_by TEXT NOT NULL DEFAULT '',
    created_at {{timestamp}} NOT NULL,
    updated_at {{timestamp}} NOT NULL
);
CREATE UNIQUE INDEX layers_org_name ON layers (org_id, name);
