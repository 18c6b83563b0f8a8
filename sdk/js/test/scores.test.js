// Call ids of measured model calls, and score() through the event queue to POST /v1/scores.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '../src/index.js';
import { eventually, silent, startFakeServer } from './helpers.js';

const scenario = JSON.parse(readFileSync(new URL('../../../testdata/conformance/scenario.json', import.meta.url), 'utf8'));
const SCORE_FIELDS = ['call_id', 'name', 'source', 'timestamp', 'value'];

function fakeOpenAI() {
  return {
    chat: {
      completions: {
        async create(body) {
          if (body.stream) {
            return {
              async *[Symbol.asyncIterator]() {
                yield { model: 'gpt-4o-2024', choices: [{ delta: { content: 'Hi' } }] };
                yield { model: 'gpt-4o-2024', choices: [], usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } };
              },
            };
          }
          await new Promise((r) => setTimeout(r, 1));
          return { model: 'gpt-4o-2024', choices: [{ message: { content: 'Hello' } }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } };
        },
      },
    },
  };
}

async function setup(options = {}, apiKey = 'pk_test') {
  const server = await startFakeServer(apiKey);
  server.state.config = scenario.configs[0];
  const logs = [];
  const logger = { ...silent, warn: (m) => logs.push(m) };
  const client = new Client({ apiKey, baseUrl: server.url, flushIntervalMs: 20, retryBackoffMs: 1, logger, ...options });
  await client.waitUntilReady(5000);
  return { server, client, logs, openai: client.wrap(fakeOpenAI(), 'two-arms'), done: async () => { await client.close(1000); await server.close(); } };
}

test('a wrapped call names its model_call: lastCallId() inside asUser, null outside', async () => {
  const { server, client, openai, done } = await setup();
  assert.equal(client.lastCallId(), null);
  const ids = await client.asUser('user-1', async () => {
    assert.equal(client.lastCallId(), null);
    await openai.chat.completions.create({ model: 'gpt-4o', messages: [] });
    const first = client.lastCallId();
    const stream = await openai.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [] });
    const second = client.lastCallId(); // known before the stream's first chunk
    for await (const _ of stream);
    return [first, second];
  });
  assert.equal(client.lastCallId(), null);
  await client.flush(5000);
  assert.deepEqual(server.eventsOf('model_call').map((e) => e.event_id), ids);
  assert.notEqual(ids[0], ids[1]);
  await done();
});

test('concurrent asUser blocks each see their own last call', async () => {
  const { server, client, openai, done } = await setup();
  const seen = await Promise.all(['u1', 'u2', 'u3', 'u4'].map((user) => client.asUser(user, async () => {
    await openai.chat.completions.create({ model: 'gpt-4o', messages: [] });
    await new Promise((r) => setTimeout(r, 2));
    return [user, client.lastCallId()];
  })));
  await client.flush(5000);
  assert.deepEqual(Object.fromEntries(seen), Object.fromEntries(server.eventsOf('model_call').map((e) => [e.user_id, e.event_id])));
  await done();
});

test('interceptModelCall and startModelCall expose call.id', async () => {
  const { server, client, done } = await setup();
  let id;
  await client.interceptModelCall('two-arms', 'u5', async (call) => {
    id = call.id;
  });
  const manual = client.startModelCall('two-arms', 'u6');
  manual.finish();
  await client.flush(5000);
  assert.deepEqual(server.eventsOf('model_call').map((e) => e.event_id), [id, manual.id]);
  await done();
});

test('a thumbs-up on a wrapped call reaches POST /v1/scores with the key', async () => {
  const { server, client, openai, done } = await setup();
  await client.asUser('user-1', async () => {
    await openai.chat.completions.create({ model: 'gpt-4o', messages: [] });
    assert.equal(client.score(client.lastCallId(), 'thumbs_up', true), true);
  });
  await client.flush(5000);
  const [call] = server.eventsOf('model_call');
  assert.equal(server.state.scoreBodies.length, 1);
  assert.deepEqual(Object.keys(server.state.scoreBodies[0]), ['scores']);
  const [score] = server.scores();
  assert.deepEqual(Object.keys(score).sort(), SCORE_FIELDS);
  assert.deepEqual([score.call_id, score.name, score.value, score.source], [call.event_id, 'thumbs_up', 1, 'human']);
  assert.match(score.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const post = server.state.requests.find((r) => r.url === '/v1/scores');
  assert.equal(post.headers['x-api-key'], 'pk_test');
  await done();
});

test('every optional field goes on the wire; a long comment is cut to 4 KiB', async () => {
  const { server, client, done } = await setup({}, 'sk_test'); // judge scores need a secret key
  const hourAgo = new Date(Math.floor(Date.now() / 1000) * 1000 - 3600_000);
  client.score('call-1', 'helpfulness', 4, { source: 'judge', comment: 'clear', evaluator: 'helpfulness-v2', evaluatorVersion: '7', judgeModel: 'gpt-4.1', timestamp: hourAgo.toISOString() });
  client.score('call-1', 'thumbs_up', false, { comment: 'é'.repeat(3000), timestamp: hourAgo });
  await client.flush(5000);
  const [first, second] = server.scores();
  assert.deepEqual(first, { call_id: 'call-1', name: 'helpfulness', value: 4, source: 'judge', comment: 'clear', evaluator: 'helpfulness-v2', evaluator_version: '7', judge_model: 'gpt-4.1', timestamp: hourAgo.toISOString() });
  assert.deepEqual([second.value, second.source, second.timestamp], [0, 'human', hourAgo.toISOString()]);
  assert.equal(new TextEncoder().encode(second.comment).length, 4096);
  await done();
});

test('invalid scores are dropped with a log line and never throw', async () => {
  const { server, client, logs, done } = await setup();
  const bad = [
    [[undefined, 'thumbs_up', 1], 'call_id'], [['', 'thumbs_up', 1], 'call_id'], [['call 4', 'thumbs_up', 1], 'call_id'],
    [['call-4', 'thumbs up', 1], 'name'], [['call-4', 'rating', NaN], 'finite'], [['call-4', 'rating', Infinity], 'finite'],
    [['call-4', 'rating', '5'], 'value'], [['call-4', 'rating', null], 'value'],
    [['call-4', 'rating', 1, { source: 'robot' }], 'source'], [['call-4', 'rating', 1, { comment: 'a\0b' }], 'comment'],
    [['call-4', 'rating', 1, { timestamp: 'yesterday' }], 'timestamp'], [['call-4', 'rating', 1, { judgeModel: 'gpt-4.1' }], 'judge_model'],
    [['call-4', 'rating', 1, { timestamp: Date.now() - 25 * 3600_000 }], 'window'], [['call-4', 'rating', 1, { timestamp: '2099-01-01T00:00:00Z' }], 'window'],
    [['call-4', 'rating', 1, { evaluatorVersion: 'v'.repeat(129) }], 'evaluator_version'], [['call-4', 'rating', 1, { source: 'judge' }], 'secret key'],
  ];
  for (const [args, field] of bad) {
    logs.length = 0;
    assert.equal(client.score(...args), false, JSON.stringify(args));
    assert.equal(logs.length, 1);
    assert.match(logs[0], new RegExp(field));
  }
  client.score('call-5', 'rating', 2);
  await client.flush(5000);
  assert.deepEqual(server.scores().map((s) => s.call_id), ['call-5']);
  await done();
});

test('scores share the queue with events: batches, retries', async () => {
  const { server, client, done } = await setup({ batchSize: 10 });
  server.state.failScores.push(503, 503);
  for (let i = 0; i < 25; i++) {
    client.track('purchase', { experiment_id: 'two-arms', user_id: `u${i}`, value: 1 });
    client.score(`call-${i}`, 'rating', i);
  }
  await client.flush(5000);
  assert.deepEqual(server.scores().map((s) => s.value).sort((a, b) => a - b), [...Array(25).keys()]);
  assert.equal(server.eventsOf('business_event').length, 25);
  assert.ok(server.state.scoreBodies.every((b) => b.scores.length <= 10));
  assert.equal(client.droppedEvents, 0);
  await done();
});

test('undeliverable scores are spilled and replayed to /v1/scores with their timestamp', async () => {
  const spillPath = join(mkdtempSync(join(tmpdir(), 'expd-scores-')), 'spill.jsonl');
  const first = await setup({ spillPath, maxRetries: 0 });
  first.server.state.failScores.push(503);
  first.client.score('call-6', 'thumbs_up', true, { comment: 'kept' });
  await first.client.close(2000);
  assert.deepEqual(first.server.scores(), []);
  const [line] = readFileSync(spillPath, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual([line.type, line.call_id], ['score', 'call-6']);
  await first.server.close();
  const second = await setup({ spillPath });
  await eventually(() => second.server.scores().length === 1, 5000, 'replayed score');
  const [score] = second.server.scores();
  assert.deepEqual([score.call_id, score.comment, score.timestamp, score.type], ['call-6', 'kept', line.timestamp, undefined]);
  await second.done();
});

test('publishable keys are known by their prefix (expd_pk_, legacy pk_)', () => {
  for (const [apiKey, publishable] of [['expd_pk_abc', true], ['pk_abc', true], ['expd_sk_abc', false], ['sk_abc', false]]) {
    const client = new Client({ apiKey, baseUrl: 'http://127.0.0.1:9', pollIntervalMs: 3_600_000, flushIntervalMs: 3_600_000, logger: silent });
    assert.equal(client.score('call-7', 'rating', 1, { source: 'code' }), !publishable, apiKey);
    client.close(1);
  }
});
