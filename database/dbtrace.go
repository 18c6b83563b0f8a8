package database

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names expd's database instrumentation scope.
const tracerName = "github.com/expd/expd/database"

// queryTracer is pgx's QueryTracer: each PostgreSQL statement is a client
// span, a child of whatever span its context carries (the HTTP request's,
// an activity's), through the global tracer provider (a no-op unless
// telemetry.SetupTracing installed one). The span carries the statement
// text with its placeholders, never the arguments.
type queryTracer struct{}

func (queryTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	op := operation(data.SQL)
	ctx, _ = otel.Tracer(tracerName).Start(ctx, op, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("db.system.name", "postgresql"),
			attribute.String("db.operation.name", op),
			attribute.String("db.query.text", data.SQL),
		))
	return ctx
}

func (queryTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	span := trace.SpanFromContext(ctx)
	if data.Err != nil {
		span.RecordError(data.Err)
		span.SetStatus(codes.Error, "query failed")
	} else {
		span.SetAttributes(attribute.Int64("db.response.returned_rows", data.CommandTag.RowsAffected()))
	}
	span.End()
}

// operation is the statement's first keyword (SELECT, INSERT, ...), the
// span name: low cardinality, unlike the statement text.
func operation(sql string) string {
	word, _, _ := strings.Cut(strings.TrimSpace(sql), " ")
	word = strings.ToUpper(strings.TrimRight(word, ";\n\t("))
	if word == "" || len(word) > 16 {
		return "query"
	}
	return word
}
