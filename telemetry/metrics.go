// Package telemetry is expd's operational instrumentation: the Prometheus
// metrics every package records into (this file), the listener that serves
// them with a readiness probe (server.go), the Temporal SDK's metrics
// bridged through OpenTelemetry (temporal.go) and OpenTelemetry tracing
// (tracing.go).
//
// Label values are fixed vocabularies (route templates, outcomes, plan
// names): never ids or user data, so series stay few and logs stay the
// place for per-request detail.
package telemetry

import (
	"database/sql"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Registry holds every expd metric, the Go runtime and process collectors
// and, once BridgeTemporal runs, the Temporal SDK's metrics.
var Registry = prometheus.NewRegistry()

var factory = registerer{Registry}

type registerer struct{ r *prometheus.Registry }

func (f registerer) counter(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "expd", Name: name, Help: help}, labels)
	f.r.MustRegister(c)
	return c
}

func (f registerer) histogram(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "expd", Name: name, Help: help, Buckets: buckets}, labels)
	f.r.MustRegister(h)
	return h
}

func (f registerer) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "expd", Name: name, Help: help})
	f.r.MustRegister(g)
	return g
}

var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// The metrics. Outcome and reason label values are the constants below.
var (
	HTTPRequests = factory.histogram("http_request_duration_seconds",
		"HTTP requests by route template, method and status, with their latency.",
		latencyBuckets, "route", "method", "status")

	IngestEvents = factory.counter("ingest_events_total",
		"Events received on /v1/events, import and business webhooks, by outcome (accepted, duplicate, rejected).", "outcome")
	IngestGroupRows = factory.histogram("ingest_group_commit_rows",
		"Rows per group-commit transaction of the event writer.",
		prometheus.ExponentialBuckets(1, 4, 9))
	IngestCommitSeconds = factory.histogram("ingest_group_commit_duration_seconds",
		"Duration of one group-commit transaction, by outcome (ok, error).", latencyBuckets, "outcome")

	// The ingest spool (INGEST_SPOOL_DIR): events acknowledged into the
	// local log and not yet shipped to ClickHouse, and the shipping.
	SpoolBacklogBytes = factory.gauge("ingest_spool_backlog_bytes",
		"Bytes of the ingest spool's entries not yet shipped to ClickHouse (INGEST_SPOOL_MAX_BYTES refuses writes past it).")
	SpoolBacklogRows = factory.gauge("ingest_spool_backlog_rows",
		"Events and scores in the ingest spool not yet shipped to ClickHouse.")
	SpoolOldestSeconds = factory.gauge("ingest_spool_oldest_unshipped_age_seconds",
		"Age of the oldest entry of the ingest spool not yet shipped (0 when none): how far ClickHouse's reads trail the acknowledgements.")
	SpoolShippedRows = factory.counter("ingest_spool_shipped_rows_total",
		"Events and scores the ingest spool shipped to ClickHouse (each spooled row once; ClickHouse may find some stored already).")
	SpoolShipErrors = factory.counter("ingest_spool_ship_errors_total",
		"Failed shipments of the ingest spool to ClickHouse (each retried after a backoff; nothing is dropped).")
	SpoolShipSeconds = factory.histogram("ingest_spool_ship_duration_seconds",
		"Duration of one successful shipment of the ingest spool to ClickHouse.", latencyBuckets)

	ConfigCache = factory.counter("sdk_config_cache_total",
		"SDK config-cache lookups by result: hit (served from memory), revalidated (checked against the database, unchanged), rebuilt (changed).", "result")

	// EvaluatorCost and Evaluations are online evaluators' work, by
	// evaluator id (a bounded set: an org's evaluators).
	EvaluatorCost = factory.counter("evaluator_judge_cost_usd_total",
		"LLM-judge spend of online evaluators in USD (priced from the judge's reported usage), by evaluator.", "evaluator")
	Evaluations = factory.counter("evaluations_total",
		"Evaluations of online evaluators by evaluator and outcome (scored, failed).", "evaluator", "outcome")

	Refusals = factory.counter("refusals_total",
		"Requests refused by the org's plan: reason rate_limit (429) or allowance (402), by plan.", "reason", "plan")
	RateLimitErrors = factory.counter("ratelimit_backend_errors_total",
		"Rate-limit checks the Redis limiter could not make (Redis unreachable or slow); each such request was allowed (fail open).")

	ResultsRuns = factory.histogram("results_run_duration_seconds",
		"Results pipeline runs by kind (nightly, manual) and final status (completed, failed), with their duration.",
		[]float64{.1, .5, 1, 5, 15, 60, 300, 900, 3600}, "kind", "status")

	WebhookDeliveries = factory.counter("webhook_deliveries_total",
		"Webhook deliveries by direction (in: expd sends none), source (payment, identity, business) and outcome (accepted, invalid_signature, malformed, error).",
		"direction", "source", "outcome")
)

// Values of the outcome, result and reason labels.
const (
	Accepted  = "accepted"
	Duplicate = "duplicate"
	Rejected  = "rejected"

	Hit         = "hit"
	Revalidated = "revalidated"
	Rebuilt     = "rebuilt"

	RateLimit = "rate_limit"
	Allowance = "allowance"
)

func init() {
	Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
}

// RegisterDBStats exports the connection pool statistics of db (open,
// in use, idle, waits) as go_sql_* with db_name=name. A second call for
// the same name is ignored.
func RegisterDBStats(db *sql.DB, name string) {
	err := Registry.Register(collectors.NewDBStatsCollector(db, name))
	var dup prometheus.AlreadyRegisteredError
	if err != nil && !errors.As(err, &dup) {
		panic(err)
	}
}
