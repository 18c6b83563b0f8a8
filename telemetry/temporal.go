package telemetry

import (
	"fmt"
	"sync"

	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
)

var (
	temporalOnce    sync.Once
	temporalHandler client.MetricsHandler
	temporalErr     error
)

// TemporalMetrics is the Temporal SDK's metrics handler for client.Options:
// the SDK's own metrics (temporal_request_*, temporal_workflow_task_*,
// temporal_activity_*, worker slots and pollers) recorded through
// OpenTelemetry and exported on Registry by the OpenTelemetry Prometheus
// exporter. One handler serves every client of the process.
func TemporalMetrics() (client.MetricsHandler, error) {
	temporalOnce.Do(func() {
		exporter, err := otelprom.New(otelprom.WithRegisterer(Registry), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
		if err != nil {
			temporalErr = fmt.Errorf("temporal metrics exporter: %w", err)
			return
		}
		provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
		temporalHandler = temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
			Meter:   provider.Meter("temporal-sdk-go"),
			OnError: func(error) {}, // a metric error must never panic a worker
		})
	})
	return temporalHandler, temporalErr
}

// TemporalTracing is the interceptor that carries the caller's trace into
// workflows and activities (spans StartWorkflow, RunWorkflow,
// StartActivity, RunActivity), for client.Options.Interceptors. It uses the
// global tracer provider, which SetupTracing configures; without it spans
// are no-ops.
func TemporalTracing() (interceptor.Interceptor, error) {
	i, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{})
	if err != nil {
		return nil, fmt.Errorf("temporal tracing interceptor: %w", err)
	}
	return i, nil
}
