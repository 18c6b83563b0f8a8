// The TypeScript client's asUser sets W3C baggage where the application has
// @opentelemetry/api: a span started inside it by the application's own
// GenAI instrumentation carries expd.user, expd.experiment and expd.variant
// once OpenTelemetry's BaggageSpanProcessor copies them, and reaches
// POST /v1/traces attributed. The client is installed from sdk/js as a
// copy (.npmrc install-links), as an application would have it, so it finds
// this project's @opentelemetry/api.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ALLOW_ALL_BAGGAGE_KEYS, BaggageSpanProcessor } from '@opentelemetry/baggage-span-processor';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { Client } from 'expd';
import { experimentConfig, liveDev } from '../../js/test/expd-dev.js';

const live = liveDev();

before(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
after(() => {
  context.disable();
});

test('spans started inside asUser carry the experiment, variant and user as baggage', { skip: live.skip }, async () => {
  const name = 'otlp-baggage';
  await live.dev.createExperiment(experimentConfig(name, [['control', 50], ['treatment', 50]]));
  const client = new Client({ apiKey: live.dev.apiKey, baseUrl: live.dev.baseUrl });
  try {
    assert.equal(await client.waitUntilReady(10_000), true);
    const memory = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new BaggageSpanProcessor(ALLOW_ALL_BAGGAGE_KEYS), new SimpleSpanProcessor(memory)],
    });
    const tracer = provider.getTracer('baggage-test');
    const chat = (model) => {
      const span = tracer.startSpan('chat', { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': model } });
      span.end();
    };
    const users = ['ana', 'bo', 'cy', 'di', 'ed', 'flo'];
    for (const user of users) {
      // The awaited part too: the binding follows awaits.
      await client.asUser(user, async () => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        chat(`model-of-${user}`);
      }, null, { experiment: name });
    }
    client.asUser('no-experiment', () => chat('model-no-experiment')); // user only: skipped by the server
    chat('model-outside'); // no baggage at all
    const spans = memory.getFinishedSpans();
    assert.equal(spans.length, users.length + 2);
    assert.equal(spans.at(-2).attributes['expd.user'], 'no-experiment');
    assert.equal(spans.at(-2).attributes['expd.experiment'], undefined);
    assert.equal(spans.at(-1).attributes['expd.user'], undefined);

    const exporter = new OTLPTraceExporter({ url: `${live.dev.baseUrl}/v1/traces`, headers: { 'X-API-Key': live.dev.apiKey } });
    const result = await new Promise((resolve) => exporter.export(spans, resolve));
    await exporter.shutdown();
    assert.equal(result.code, 0, String(result.error));

    const events = await live.dev.events(name, { type: 'model_call' });
    assert.equal(events.length, users.length, JSON.stringify(events));
    for (const user of users) {
      const e = events.find((x) => x.user_id === user);
      assert.ok(e, `no model_call of ${user}`);
      assert.equal(e.model, `model-of-${user}`);
      assert.equal(e.variant, client.assign(name, user), `variant of ${user}`);
    }
  } finally {
    await client.close?.();
  }
});
