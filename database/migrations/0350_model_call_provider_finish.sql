-- Two model-call fields (vocab.ModelCallFields; ClickHouse migration 0002):
-- the provider that served a call (OpenTelemetry's gen_ai.provider.name,
-- formerly gen_ai.system) and its choices' finish reasons, comma-separated
-- (gen_ai.response.finish_reasons). Text a metric does not read.
ALTER TABLE events ADD COLUMN provider TEXT;
ALTER TABLE events ADD COLUMN finish_reasons TEXT;
