// The OpenTelemetry JS SDK's OTLP trace exporters (OTLP/JSON over HTTP and
// protobuf over HTTP) send GenAI spans to POST /v1/traces of a real
// `expd dev` built from this checkout (the harness of sdk/js's tests).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as JSONExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { SpanStatusCode } from '@opentelemetry/api';
import { experimentConfig, liveDev } from '../../js/test/expd-dev.js';

const live = liveDev();

/** Records two GenAI chat spans of the experiment (one failed) and an HTTP span. */
function recordSpans(experiment, user) {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer('js-otlp-test');
  const start = Date.now() - 60_000;
  const chat = tracer.startSpan('chat gpt-4o', {
    startTime: start,
    attributes: {
      'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4o',
      'gen_ai.response.model': 'gpt-4o-mini', 'gen_ai.usage.input_tokens': 42, 'gen_ai.usage.output_tokens': 7,
      'gen_ai.response.finish_reasons': ['stop'],
      'expd.experiment': experiment, 'expd.variant': 'control', 'expd.user': user,
    },
  });
  chat.addEvent('gen_ai.content.prompt', { 'gen_ai.prompt': 'What is 2+2?' });
  chat.addEvent('gen_ai.content.completion', { 'gen_ai.completion': '4' });
  chat.end(start + 1250);
  const failed = tracer.startSpan('chat', {
    startTime: start,
    attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.system': 'openai', 'gen_ai.request.model': 'gpt-4o',
      'expd.experiment': experiment, 'expd.variant': 'treatment', 'user.id': user },
  });
  failed.setStatus({ code: SpanStatusCode.ERROR, message: 'upstream timeout' });
  failed.end(start + 30_000);
  tracer.startSpan('GET /answer', { startTime: start }).end(start + 2000);
  return memory.getFinishedSpans();
}

function exportOnce(exporter, spans) {
  return new Promise((resolve) => exporter.export(spans, resolve));
}

for (const [encoding, Exporter] of [['OTLP/JSON', JSONExporter], ['protobuf', ProtoExporter]]) {
  test(`${encoding}: GenAI spans become model_call events, a re-sent export is stored once`, { skip: live.skip }, async () => {
    const name = `otlp-${encoding === 'protobuf' ? 'proto' : 'json'}`;
    await live.dev.createExperiment(experimentConfig(name, [['control', 50], ['treatment', 50]]));
    const spans = recordSpans(name, 'user-1');
    const exporter = new Exporter({ url: `${live.dev.baseUrl}/v1/traces`, headers: { 'X-API-Key': live.dev.apiKey } });
    for (let i = 0; i < 2; i++) {
      const result = await exportOnce(exporter, spans);
      assert.equal(result.code, 0, `export ${i + 1}: ${result.error}`);
    }
    await exporter.shutdown();

    const events = await live.dev.events(name);
    assert.equal(events.length, 2, JSON.stringify(events));
    const id = (s) => s.spanContext().traceId + s.spanContext().spanId;
    const byId = Object.fromEntries(events.map((e) => [e.event_id, e]));
    const chat = byId[id(spans[0])];
    assert.ok(chat, `no event ${id(spans[0])} in ${JSON.stringify(events)}`);
    assert.equal(chat.type, 'model_call');
    assert.equal(chat.user_id, 'user-1');
    assert.equal(chat.variant, 'control');
    assert.equal(chat.model, 'gpt-4o-mini');
    assert.equal(chat.latency_ms, 1250);
    assert.equal(chat.input_tokens, 42);
    assert.equal(chat.output_tokens, 7);
    assert.equal(chat.prompt, 'What is 2+2?');
    assert.equal(chat.response, '4');
    assert.equal(chat.provider, 'openai');
    assert.equal(chat.finish_reasons, 'stop');
    const failed = byId[id(spans[1])];
    assert.equal(failed.variant, 'treatment');
    assert.equal(failed.error, 'upstream timeout');
    assert.equal(failed.latency_ms, 30_000);
  });
}

test('a span naming an unknown experiment is refused whole', { skip: live.skip }, async () => {
  const exporter = new ProtoExporter({ url: `${live.dev.baseUrl}/v1/traces`, headers: { 'X-API-Key': live.dev.apiKey } });
  const result = await exportOnce(exporter, recordSpans('no-such-experiment', 'user-2'));
  await exporter.shutdown();
  assert.notEqual(result.code, 0);
  assert.match(String(result.error), /Bad Request/); // 400: nothing of the export stored
});
