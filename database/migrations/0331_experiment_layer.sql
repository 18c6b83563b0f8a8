-- Issue 33: the layer an experiment holds a range of (set at creation,
-- never changed; its range is in the config). Owner: package experiments.
ALTER TABLE experiments ADD COLUMN layer_id {{uuid}} REFERENCES layers(id);
CREATE INDEX experiments_layer ON experiments (org_id, layer_id) WHERE layer_id IS NOT NULL;
