package telemetry

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
)

// TracingConfigured tells whether the standard OTLP exporter variables ask
// for traces.
func TracingConfigured() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// SetupTracing installs the global tracer provider and W3C propagators when
// TracingConfigured: spans go to the OTLP/gRPC exporter, which reads the
// standard OTEL_EXPORTER_OTLP_* variables (endpoint, headers, TLS,
// timeout); OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the
// service. Otherwise tracing stays a no-op. The returned function flushes
// and stops the exporter.
func SetupTracing(ctx context.Context, service string) (func(context.Context) error, error) {
	if !TracingConfigured() {
		return func(context.Context) error { return nil }, nil
	}
	exporter, err := otlptracegrpc.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	return InstallTracing(sdktrace.WithBatcher(exporter), service)
}

// InstallTracing makes a tracer provider with the span processor global.
// Tests pass a synchronous in-memory one.
func InstallTracing(processor sdktrace.TracerProviderOption, service string) (func(context.Context) error, error) {
	// The environment (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) wins over service.
	res, err := resource.Merge(resource.NewSchemaless(semconv.ServiceName(service)), resource.Default())
	if err != nil {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(processor, sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return tp.Shutdown, nil
}
