package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/expd/expd/internal/eventmix"
	"github.com/expd/expd/otlp"
)

const tracesPath = "/v1/traces"

// compareTraces measures POST /v1/traces against POST /v1/events carrying
// the same model calls (docs/ingest.md, "POST /v1/traces", benchmark):
// each round builds -requests batches of -batch model calls (eventmix.Event's,
// users of their own per round) and the same calls as OpenTelemetry GenAI
// spans, one export of -batch spans per batch, protobuf as the exporters
// send it; it posts both from the same clients, the routes taking turns
// going first. The ratio is spans/s over model calls/s, of the rounds' sums.
func compareTraces(ctx context.Context, env *benchEnv, cfg config) error {
	var calls, spans loadResult
	for round := range cfg.traceRounds {
		callBatches, spanBatches, err := makeTracedCalls(env.experimentID, round, cfg.requests, cfg.batch)
		if err != nil {
			return err
		}
		var c, s loadResult
		if round%2 == 0 {
			if c, err = postAll(ctx, env, "/v1/events", callBatches, cfg.clients); err == nil {
				s, err = postAll(ctx, env, tracesPath, spanBatches, cfg.clients)
			}
		} else {
			if s, err = postAll(ctx, env, tracesPath, spanBatches, cfg.clients); err == nil {
				c, err = postAll(ctx, env, "/v1/events", callBatches, cfg.clients)
			}
		}
		if err != nil {
			return err
		}
		fmt.Printf("traces round %d: POST /v1/events %.0f model calls/s (p50 %s, p99 %s); POST /v1/traces %.0f spans/s (p50 %s, p99 %s); ratio %.2f\n",
			round+1, c.rate(), c.quantile(0.5), c.quantile(0.99), s.rate(), s.quantile(0.5), s.quantile(0.99), s.rate()/c.rate())
		calls.add(c)
		spans.add(s)
	}
	fmt.Printf("POST /v1/traces: %d spans in %s: %.0f spans/s (p50 %s, p99 %s); POST /v1/events: %d model calls in %s: %.0f calls/s (p50 %s, p99 %s)\n",
		spans.events, spans.elapsed.Round(time.Millisecond), spans.rate(), spans.quantile(0.5), spans.quantile(0.99),
		calls.events, calls.elapsed.Round(time.Millisecond), calls.rate(), calls.quantile(0.5), calls.quantile(0.99))
	fmt.Printf("ratio spans/s / model calls/s (same run, goal >= 0.7): %.2f\n", spans.rate()/calls.rate())
	// Both routes stored every call (the spans under their own event ids).
	var stored int64
	if err := env.db.WithContext(ctx).Table("events").Where("experiment_id = ? AND user_id LIKE ?", env.experimentID, "traced-%").
		Count(&stored).Error; err != nil {
		return fmt.Errorf("count stored calls: %w", err)
	}
	if want := int64(calls.events + spans.events); stored != want {
		return fmt.Errorf("stored %d model calls of the traces comparison, want %d", stored, want)
	}
	return nil
}

// makeTracedCalls builds requests of model calls and, for each, an OTLP
// export of the same calls as GenAI spans.
func makeTracedCalls(experimentID string, round, requests, size int) (calls, spans []batch, err error) {
	now := time.Now().UTC()
	calls, spans = make([]batch, requests), make([]batch, requests)
	for r := range requests {
		evs := make([]map[string]any, size)
		sps := make([]*tracepb.Span, size)
		for i := range evs {
			n := 5 + 10*((round*requests+r)*size+i) // a model call of eventmix.Event's mix
			evs[i] = eventmix.Event(experimentID, n, now)
			evs[i]["user_id"] = fmt.Sprintf("traced-%d-%d", round, n/30)
			if sps[i], err = genAISpan(evs[i]); err != nil {
				return nil, nil, err
			}
		}
		calls[r].body, _ = json.Marshal(map[string]any{"events": evs})
		calls[r].events = evs
		export := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
			Resource:   &resourcepb.Resource{Attributes: []*commonpb.KeyValue{str("service.name", "support-bot")}},
			ScopeSpans: []*tracepb.ScopeSpans{{Scope: &commonpb.InstrumentationScope{Name: "opentelemetry.instrumentation.openai"}, Spans: sps}},
		}}}
		if spans[r].body, err = proto.Marshal(export); err != nil {
			return nil, nil, err
		}
		spans[r].events, spans[r].contentType = evs, otlp.Protobuf.ContentType()
	}
	return calls, spans, nil
}

// genAISpan is a model call as the OpenTelemetry GenAI conventions
// record it, tagged with its experiment, variant and user.
func genAISpan(ev map[string]any) (*tracepb.Span, error) {
	start, err := time.Parse(time.RFC3339Nano, ev["timestamp"].(string))
	if err != nil {
		return nil, err
	}
	ids := make([]byte, 24)
	if _, err := rand.Read(ids); err != nil {
		return nil, err
	}
	end := start.Add(time.Duration(ev["latency_ms"].(float64) * float64(time.Millisecond)))
	model := ev["model"].(string)
	return &tracepb.Span{
		TraceId: ids[:16], SpanId: ids[16:], Name: "chat " + model, Kind: tracepb.Span_SPAN_KIND_CLIENT,
		StartTimeUnixNano: uint64(start.UnixNano()), EndTimeUnixNano: uint64(end.UnixNano()),
		Attributes: []*commonpb.KeyValue{
			str("gen_ai.operation.name", "chat"), str("gen_ai.provider.name", "openai"),
			str("gen_ai.request.model", model), str("gen_ai.response.model", model),
			num("gen_ai.usage.input_tokens", int64(ev["input_tokens"].(int))), num("gen_ai.usage.output_tokens", int64(ev["output_tokens"].(int))),
			str("gen_ai.input.messages", ev["prompt"].(string)), str("gen_ai.output.messages", ev["response"].(string)),
			str(otlp.AttrExperiment, ev["experiment_id"].(string)), str(otlp.AttrVariant, ev["variant"].(string)), str(otlp.AttrUser, ev["user_id"].(string)),
		},
		Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK},
	}, nil
}

func str(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func num(k string, v int64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}}
}

// tracesAck checks a 200 ExportTraceServiceResponse that stored every
// span; it returns how many.
func tracesAck(status int, raw []byte, spans int) (int, error) {
	var resp coltracepb.ExportTraceServiceResponse
	if status != 200 || proto.Unmarshal(raw, &resp) != nil || resp.GetPartialSuccess().GetRejectedSpans() > 0 {
		return 0, fmt.Errorf("POST %s: %d %q", tracesPath, status, raw)
	}
	return spans, nil
}
