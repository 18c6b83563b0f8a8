// Package otlp reads OTLP/HTTP trace exports (POST /v1/traces): it
// decodes a request in either OTLP encoding (binary protobuf or OTLP/JSON
// with its hex trace and span ids) and turns the spans that follow the
// OpenTelemetry GenAI semantic conventions and name an expd experiment,
// variant and user into model_call events for the one ingest path
// (ingest.Sources). docs/ingest.md, "OTLP traces", is the mapping.
package otlp
