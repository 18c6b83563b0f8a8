package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/otlp"
)

// genAISpans records, with the real OpenTelemetry SDK, what a GenAI
// instrumentation emits: a chat call tagged with expd's attributes, a
// failed one tagged with user.id, an untagged GenAI span and an HTTP span.
func genAISpans(t *testing.T, expRef string, at time.Time) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := tp.Tracer("genai-test")
	ctx := context.Background()

	_, ok := tr.Start(ctx, "chat gpt-4o", trace.WithTimestamp(at), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.provider.name", "openai"),
		attribute.String("gen_ai.request.model", "gpt-4o"), attribute.String("gen_ai.response.model", "gpt-4o-2024-08-06"),
		attribute.Int("gen_ai.usage.input_tokens", 120), attribute.Int("gen_ai.usage.output_tokens", 30),
		attribute.StringSlice("gen_ai.response.finish_reasons", []string{"stop", "length"}),
		attribute.Float64("gen_ai.response.time_to_first_chunk", 0.095),
		attribute.String(otlp.AttrExperiment, expRef), attribute.String(otlp.AttrVariant, "control"), attribute.String(otlp.AttrUser, "u1")))
	ok.AddEvent("gen_ai.content.prompt", trace.WithAttributes(attribute.String("gen_ai.prompt", "Hi")))
	ok.AddEvent("gen_ai.content.completion", trace.WithAttributes(attribute.String("gen_ai.completion", "Hello")))
	ok.End(trace.WithTimestamp(at.Add(812500 * time.Microsecond)))

	_, failed := tr.Start(ctx, "chat claude", trace.WithTimestamp(at), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.system", "anthropic"),
		attribute.String("gen_ai.request.model", "claude-x"), attribute.String("error.type", "rate_limit_error"),
		attribute.String(otlp.AttrExperiment, expRef), attribute.String(otlp.AttrVariant, "concise"), attribute.String("user.id", "u2")))
	failed.SetStatus(otelcodes.Error, "429 Too Many Requests")
	failed.End(trace.WithTimestamp(at.Add(40 * time.Millisecond)))

	_, untagged := tr.Start(ctx, "chat", trace.WithTimestamp(at), trace.WithAttributes(attribute.String("gen_ai.operation.name", "chat")))
	untagged.End(trace.WithTimestamp(at.Add(time.Second)))
	_, http := tr.Start(ctx, "GET /", trace.WithTimestamp(at))
	http.End(trace.WithTimestamp(at.Add(time.Second)))
	return rec.Ended()
}

func exporter(t *testing.T, env *testenv.Env, key string, opts ...otlptracehttp.Option) *otlptrace.Exporter {
	t.Helper()
	opts = append([]otlptracehttp.Option{otlptracehttp.WithEndpointURL(env.Server.URL + "/v1/traces"),
		otlptracehttp.WithHeaders(map[string]string{"X-API-Key": key}), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false})}, opts...)
	exp, err := otlptracehttp.New(t.Context(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	return exp
}

func storedCalls(t *testing.T, env *testenv.Env, orgID string) map[string]ingest.EventRow {
	t.Helper()
	var rows []ingest.EventRow
	if err := env.DB.Where("org_id = ?", orgID).Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := make(map[string]ingest.EventRow, len(rows))
	for _, r := range rows {
		out[r.EventID] = r
	}
	return out
}

func spanEventID(s sdktrace.ReadOnlySpan) string {
	tid, sid := s.SpanContext().TraceID(), s.SpanContext().SpanID()
	return hex.EncodeToString(tid[:]) + hex.EncodeToString(sid[:])
}

// The otlptracehttp exporter (protobuf, then gzip) sends GenAI spans: the
// two tagged ones are stored as model calls with their fields, a second
// export of the same spans stores and counts nothing more.
func TestTracesFromTheOpenTelemetrySDK(t *testing.T) {
	f := newIngestFixture(t)
	at := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	spans := genAISpans(t, "exp", at)
	// The exporter reports the skipped spans (partial_success) as an error.
	skipped := "OTLP partial success: 2 of 4 spans not stored"
	if err := exporter(t, f.env, f.org.PublishableKey).ExportSpans(t.Context(), spans); err == nil || !strings.Contains(err.Error(), skipped) {
		t.Fatalf("export: %v, want the partial success %q", err, skipped)
	}
	calls := storedCalls(t, f.env, f.org.ID)
	if len(calls) != 2 {
		t.Fatalf("stored %d events, want the 2 tagged GenAI spans: %+v", len(calls), calls)
	}
	ok, found := calls[spanEventID(spans[0])]
	if !found {
		t.Fatalf("no event with id trace id + span id %s: %v", spanEventID(spans[0]), calls)
	}
	if ok.Type != "model_call" || ok.ExperimentID != f.exp.ID || ok.UserID != "u1" || ok.Variant != "control" ||
		*ok.Model != "gpt-4o-2024-08-06" || *ok.LatencyMs != 812.5 || *ok.InputTokens != 120 || *ok.OutputTokens != 30 ||
		*ok.TotalTokens != 150 || *ok.TimeToFirstTokenMs != 95 || ok.Error != nil || *ok.Prompt != "Hi" || *ok.Response != "Hello" ||
		!ok.Ts.Equal(at) || ok.Source != ingest.SourceAPI || *ok.Provider != "openai" || *ok.FinishReasons != "stop,length" {
		t.Errorf("chat span stored as %+v / %+v", ok, ok.ModelCall)
	}
	failed := calls[spanEventID(spans[1])]
	if failed.UserID != "u2" || failed.Variant != "concise" || failed.Error == nil || *failed.Error != "rate_limit_error" ||
		*failed.Model != "claude-x" || *failed.LatencyMs != 40 || failed.InputTokens != nil ||
		*failed.Provider != "anthropic" || failed.FinishReasons != nil {
		t.Errorf("failed span stored as %+v / %+v", failed, failed.ModelCall)
	}

	// The same batch again (an exporter's retry), gzipped this time.
	if err := exporter(t, f.env, f.org.SecretKey, otlptracehttp.WithCompression(otlptracehttp.GzipCompression)).ExportSpans(t.Context(), spans); err == nil || !strings.Contains(err.Error(), skipped) {
		t.Fatalf("re-export: %v", err)
	}
	if n := len(storedCalls(t, f.env, f.org.ID)); n != 2 {
		t.Errorf("after the re-export %d events, want 2", n)
	}
	if used, err := ingest.MonthlyUsage(t.Context(), f.env.DB, f.org.ID, time.Now()); err != nil || used != 2 {
		t.Errorf("usage %d (%v), want 2: the re-sent spans are not counted", used, err)
	}
}

// otlpRequest is an export of one span, built by hand for the raw
// encodings and the refusals.
func otlpRequest(expRef, user string, at time.Time, traceByte byte) *coltracepb.ExportTraceServiceRequest {
	str := func(k, v string) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
	}
	span := &tracepb.Span{
		TraceId: bytes.Repeat([]byte{traceByte}, 16), SpanId: bytes.Repeat([]byte{0xab}, 8), Name: "chat",
		StartTimeUnixNano: uint64(at.UnixNano()), EndTimeUnixNano: uint64(at.Add(250 * time.Millisecond).UnixNano()),
		Attributes: []*commonpb.KeyValue{str("gen_ai.operation.name", "chat"), str("gen_ai.request.model", "m1"),
			str(otlp.AttrExperiment, expRef), str(otlp.AttrVariant, "control"), str(otlp.AttrUser, user),
			{Key: "gen_ai.output.messages", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{
				Values: []*commonpb.AnyValue{{Value: &commonpb.AnyValue_StringValue{StringValue: "ok"}}}}}}}},
	}
	other := &tracepb.Span{TraceId: span.TraceId, SpanId: bytes.Repeat([]byte{1}, 8), Name: "db", StartTimeUnixNano: span.StartTimeUnixNano, EndTimeUnixNano: span.EndTimeUnixNano}
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{span, other}}}}}}
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// otlpStatus decodes a refusal, which must be a google.rpc.Status in the
// request's encoding.
func otlpStatus(t *testing.T, r testenv.Response, status int, contentType string) *statuspb.Status {
	t.Helper()
	if r.Status != status || r.Header.Get("Content-Type") != contentType {
		t.Fatalf("answer %d %s, want %d %s: %s", r.Status, r.Header.Get("Content-Type"), status, contentType, r.Body)
	}
	st := &statuspb.Status{}
	unmarshal := proto.Unmarshal
	if contentType == "application/json" {
		unmarshal = protojson.Unmarshal
	}
	if err := unmarshal(r.Body, st); err != nil || st.Message == "" {
		t.Fatalf("body %q is not a google.rpc.Status with a message: %v", r.Body, err)
	}
	return st
}

// OTLP/JSON (hex ids) and gzip bodies are read; the answer is encoded
// like the request, with the skipped span in partial_success. Malformed
// protobuf, an oversized body, a wrong key, another org's experiment and
// an unknown media type are refused with a Status, nothing stored.
func TestTracesAnswerAsOTLP(t *testing.T) {
	f := newIngestFixture(t)
	at := time.Now().Add(-time.Hour)
	const jsonCT, protoCT = "application/json", "application/x-protobuf"
	key := testenv.APIKey(f.org.PublishableKey)

	js, err := protojson.Marshal(otlpRequest("exp", "u1", at, 0x11))
	if err != nil {
		t.Fatal(err)
	}
	// protojson writes ids in base64; OTLP/JSON writes them in hex.
	req := otlpRequest("exp", "u1", at, 0x11)
	span := req.ResourceSpans[0].ScopeSpans[0].Spans[0]
	js = bytes.ReplaceAll(js, []byte(`"EREREREREREREREREREREQ=="`), []byte(`"`+hex.EncodeToString(span.TraceId)+`"`))
	js = bytes.ReplaceAll(js, []byte(`"q6urq6urq6s="`), []byte(`"`+hex.EncodeToString(span.SpanId)+`"`))
	js = bytes.ReplaceAll(js, []byte(`"AQEBAQEBAQE="`), []byte(`"0101010101010101"`))
	r := f.env.Do(t, "POST", "/v1/traces", js, append(key, "Content-Type", jsonCT)...)
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != jsonCT {
		t.Fatalf("OTLP/JSON: %d %s", r.Status, r.Body)
	}
	resp := &coltracepb.ExportTraceServiceResponse{}
	if err := protojson.Unmarshal(r.Body, resp); err != nil || resp.PartialSuccess.GetRejectedSpans() != 1 ||
		!strings.Contains(resp.PartialSuccess.GetErrorMessage(), "not GenAI") {
		t.Fatalf("OTLP/JSON answer %s (%v), want partialSuccess with the db span", r.Body, err)
	}
	id := otlp.EventID(span.TraceId, span.SpanId)
	stored := storedCalls(t, f.env, f.org.ID)
	if c, ok := stored[id]; !ok || *c.Response != `["ok"]` || *c.LatencyMs != 250 || len(stored) != 1 || len(id) != 48 {
		t.Fatalf("stored %+v (response %q, latency %v), want the chat span as %s", stored, *c.Response, *c.LatencyMs, id)
	}

	// Protobuf, gzipped: a second span; the answer is protobuf.
	pb, err := proto.Marshal(otlpRequest("exp", "u2", at, 0x22))
	if err != nil {
		t.Fatal(err)
	}
	r = f.env.Do(t, "POST", "/v1/traces", gzipped(t, pb), append(key, "Content-Type", protoCT, "Content-Encoding", "gzip")...)
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != protoCT || proto.Unmarshal(r.Body, resp) != nil || resp.PartialSuccess.GetRejectedSpans() != 1 {
		t.Fatalf("gzip protobuf: %d %q", r.Status, r.Body)
	}
	if n := len(storedCalls(t, f.env, f.org.ID)); n != 2 {
		t.Fatalf("%d events, want 2", n)
	}

	other := f.env.NewOrg(t)
	theirs := create(t, f.env, other, validConfig("theirs"))
	big := make([]byte, 5<<20)
	for _, c := range []struct {
		name    string
		body    []byte
		headers []string
		status  int
		ct      string
		says    string
	}{
		{"malformed protobuf", []byte{0x0a, 0xff, 0xff, 0x01}, append(key, "Content-Type", protoCT), 400, protoCT, "malformed_otlp"},
		{"malformed JSON", []byte(`{"resourceSpans": [`), append(key, "Content-Type", jsonCT), 400, jsonCT, "malformed_otlp"},
		{"JSON with base64 ids", mustProtoJSON(t, otlpRequest("exp", "u3", at, 0x33)), append(key, "Content-Type", jsonCT), 400, jsonCT, "hex"},
		{"oversized body", big, append(key, "Content-Type", protoCT), 413, protoCT, "body_too_large"},
		{"oversized after gzip", gzipped(t, big), append(key, "Content-Type", protoCT, "Content-Encoding", "gzip"), 413, protoCT, "body_too_large"},
		{"wrong key", pb, []string{"X-API-Key", "pk_live_nope", "Content-Type", protoCT}, 401, protoCT, "unauthorized"},
		{"another org's experiment", mustProto(t, otlpRequest(theirs.ID, "u4", at, 0x44)), append(key, "Content-Type", protoCT), 400, protoCT, "expd.experiment: no experiment"},
		{"unknown media type", pb, append(key, "Content-Type", "text/plain"), 415, jsonCT, "unsupported_media_type"},
		{"unknown encoding", pb, append(key, "Content-Type", protoCT, "Content-Encoding", "br"), 415, protoCT, "unsupported_media_type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := otlpStatus(t, f.env.Do(t, "POST", "/v1/traces", c.body, c.headers...), c.status, c.ct)
			if !strings.Contains(st.Message, c.says) {
				t.Errorf("message %q does not say %q", st.Message, c.says)
			}
		})
	}
	if n := len(storedCalls(t, f.env, f.org.ID)); n != 2 {
		t.Errorf("%d events after the refusals, want still 2", n)
	}
	if n := len(storedCalls(t, f.env, other.ID)); n != 0 {
		t.Errorf("the other org has %d events", n)
	}
}

func mustProto(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustProtoJSON(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
