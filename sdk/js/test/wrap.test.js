// wrap() and interceptModelCall() with a fake client of the official openai
// package's shape (resources with #private state, promises, async-iterable streams).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Client } from '../src/index.js';
import { silent, startFakeServer } from './helpers.js';

const scenario = JSON.parse(readFileSync(new URL('../../../testdata/conformance/scenario.json', import.meta.url), 'utf8'));
const expId = scenario.configs[0].experiments[0].id;

class Stream {
  #chunks;
  constructor(chunks, failAfter = null) {
    this.#chunks = chunks;
    this.failAfter = failAfter;
    this.controller = new AbortController();
  }
  async *[Symbol.asyncIterator]() {
    for (let i = 0; i < this.#chunks.length; i++) {
      if (i === this.failAfter) throw new Error('connection reset');
      await new Promise((r) => setTimeout(r, 2));
      yield this.#chunks[i];
    }
  }
}

class Completions {
  #calls = 0;
  async create(body) {
    this.#calls++;
    if (body.model === 'broken') {
      const err = new Error('model not found');
      err.name = 'NotFoundError';
      throw err;
    }
    if (body.stream) {
      return new Stream([
        { model: 'gpt-4o-2024', choices: [{ delta: { content: 'Hel' } }] },
        { model: 'gpt-4o-2024', choices: [{ delta: { content: 'lo' } }] },
        { model: 'gpt-4o-2024', choices: [], usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } },
      ], body.fail ? 1 : null);
    }
    return { model: 'gpt-4o-2024', choices: [{ message: { content: 'Hello' } }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } };
  }
  get calls() {
    return this.#calls;
  }
}

class FakeOpenAI {
  constructor() {
    this.chat = { completions: new Completions() };
    this.responses = { create: async () => ({ model: 'gpt-4.1', output_text: 'hi', usage: { input_tokens: 3, output_tokens: 1, total_tokens: 4 } }) };
    this.embeddings = { create: async () => ({ model: 'text-embedding-3-small', data: [], usage: { prompt_tokens: 2, total_tokens: 2 } }) };
    this.apiKey = 'sk-provider';
  }
}

async function setup() {
  const server = await startFakeServer();
  server.state.config = scenario.configs[0];
  const client = new Client({ apiKey: 'pk_test', baseUrl: server.url, flushIntervalMs: 20, logger: silent });
  await client.waitUntilReady(5000);
  return { server, client, openai: client.wrap(new FakeOpenAI(), 'two-arms') };
}

test('each wrapped call records an exposure and a model_call', async () => {
  const { server, client, openai } = await setup();
  const answer = await client.asUser('user-1', async () => {
    await new Promise((r) => setTimeout(r, 1)); // the binding survives awaits
    await openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    return openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'again' }] });
  });
  assert.equal(answer.choices[0].message.content, 'Hello');
  await client.flush(5000);
  const calls = server.eventsOf('model_call');
  const exposures = server.eventsOf('exposure');
  assert.equal(calls.length, 2);
  assert.equal(exposures.length, 2);
  const variant = client.assign('two-arms', 'user-1');
  for (const e of [...calls, ...exposures]) {
    assert.equal(e.experiment_id, expId);
    assert.equal(e.user_id, 'user-1');
    assert.equal(e.variant, variant);
  }
  assert.equal(calls[0].model, 'gpt-4o-2024');
  assert.deepEqual([calls[0].input_tokens, calls[0].output_tokens, calls[0].total_tokens], [5, 1, 6]);
  assert.equal(calls[0].response, 'Hello');
  assert.equal(calls[0].prompt, JSON.stringify([{ role: 'user', content: 'hi' }]));
  assert.ok(calls[0].latency_ms >= 0);
  assert.equal(calls[0].error, null);
  assert.equal(openai.chat.completions.calls, 2); // #private getter reached through the proxy
  assert.equal(openai.apiKey, 'sk-provider');
  await client.close();
  await server.close();
});

test('outside asUser a call passes through unrecorded', async () => {
  const { server, client, openai } = await setup();
  await openai.chat.completions.create({ model: 'gpt-4o', messages: [] });
  await client.flush(5000);
  assert.equal(server.eventsOf('model_call').length, 0);
  await client.close();
  await server.close();
});

test('streams: chunks pass through; TTFT, text, model and usage are recorded at the end', async () => {
  const { server, client, openai } = await setup();
  const parts = [];
  await client.asUser('user-2', async () => {
    const stream = await openai.chat.completions.create({ model: 'gpt-4o', messages: [], stream: true, stream_options: { include_usage: true } });
    assert.ok(stream.controller instanceof AbortController);
    for await (const chunk of stream) parts.push(chunk.choices[0]?.delta?.content ?? '');
  });
  assert.equal(parts.join(''), 'Hello');
  await client.flush(5000);
  const [call] = server.eventsOf('model_call');
  assert.equal(call.response, 'Hello');
  assert.equal(call.total_tokens, 9);
  assert.ok(call.time_to_first_token_ms > 0 && call.time_to_first_token_ms <= call.latency_ms);
  await client.close();
  await server.close();
});

test('a failing call or stream re-throws and records the error', async () => {
  const { server, client, openai } = await setup();
  await client.asUser('user-3', async () => {
    await assert.rejects(openai.chat.completions.create({ model: 'broken', messages: [] }), /model not found/);
    const stream = await openai.chat.completions.create({ model: 'gpt-4o', messages: [], stream: true, fail: true });
    await assert.rejects(async () => {
      for await (const _ of stream) { /* consume */ }
    }, /connection reset/);
  });
  await client.flush(5000);
  const calls = server.eventsOf('model_call');
  assert.equal(calls.length, 2);
  assert.equal(calls[0].error, 'NotFoundError: model not found');
  assert.equal(calls[1].error, 'Error: connection reset');
  await client.close();
  await server.close();
});

test('breaking out of a stream records it once', async () => {
  const { server, client, openai } = await setup();
  await client.asUser('user-4', async () => {
    const stream = await openai.chat.completions.create({ model: 'gpt-4o', messages: [], stream: true });
    for await (const _ of stream) break;
  });
  await client.flush(5000);
  assert.equal(server.eventsOf('model_call').length, 1);
  await client.close();
  await server.close();
});

test('responses and embeddings are measured too', async () => {
  const { server, client, openai } = await setup();
  await client.asUser('user-5', async () => {
    await openai.responses.create({ model: 'gpt-4.1', input: 'hi' });
    await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'hi' });
  });
  await client.flush(5000);
  const calls = server.eventsOf('model_call');
  assert.deepEqual(calls.map((c) => [c.model, c.total_tokens]), [['gpt-4.1', 4], ['text-embedding-3-small', 2]]);
  assert.equal(calls[0].response, 'hi');
  await client.close();
  await server.close();
});

test('interceptModelCall measures any provider and re-throws', async () => {
  const { server, client } = await setup();
  const out = await client.interceptModelCall('two-arms', 'user-6', async (call) => {
    assert.equal(call.variant, client.assign('two-arms', 'user-6'));
    call.setUsage(10, 5);
    call.costUsd = 0.002;
    call.model = 'claude';
    return 'ok';
  });
  assert.equal(out, 'ok');
  await assert.rejects(client.interceptModelCall('two-arms', 'user-6', async () => { throw new TypeError('bad'); }), TypeError);
  await client.flush(5000);
  const calls = server.eventsOf('model_call');
  assert.equal(calls.length, 2);
  assert.deepEqual([calls[0].total_tokens, calls[0].cost_usd, calls[0].model], [15, 0.002, 'claude']);
  assert.equal(calls[1].error, 'TypeError: bad');
  assert.equal(server.eventsOf('exposure').length, 2);
  await client.close();
  await server.close();
});
