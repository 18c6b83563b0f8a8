// The client against the fake server: construction, config polling, events,
// failure modes, spill replay.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, MissingApiKeyError } from '../src/index.js';
import { EXPOSE_ALWAYS, EXPOSE_DAILY, EXPOSE_NONE, ExposureLog } from '../src/exposures.js';
import { cutUtf8 } from '../src/events.js';
import { eventually, silent, startFakeServer } from './helpers.js';

const scenario = JSON.parse(readFileSync(new URL('../../../testdata/conformance/scenario.json', import.meta.url), 'utf8'));
const config = scenario.configs[0];

async function setup(options = {}) {
  const server = await startFakeServer();
  server.state.config = config;
  const client = new Client({ apiKey: 'pk_test', baseUrl: server.url, flushIntervalMs: 20, retryBackoffMs: 5, maxRetries: 2, logger: silent, ...options });
  return { server, client, done: async () => { await client.close(1000); await server.close(); } };
}

test('construction needs a key: argument, else SERVICE_API_KEY, else it throws', async () => {
  const saved = { key: process.env.SERVICE_API_KEY, url: process.env.SERVICE_BASE_URL };
  try {
    delete process.env.SERVICE_API_KEY;
    assert.throws(() => new Client({ baseUrl: 'http://127.0.0.1:1' }), MissingApiKeyError);
    const server = await startFakeServer();
    server.state.config = config;
    process.env.SERVICE_API_KEY = 'pk_test';
    process.env.SERVICE_BASE_URL = server.url;
    const client = new Client({ logger: silent });
    assert.equal(client.baseUrl, server.url);
    assert.equal(await client.waitUntilReady(5000), true);
    assert.equal(server.state.requests[0].headers['x-api-key'], 'pk_test');
    await client.close();
    await server.close();
  } finally {
    for (const [k, v] of [['SERVICE_API_KEY', saved.key], ['SERVICE_BASE_URL', saved.url]]) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
});

test('assign, getPrompt and getVariables answer null / defaults until the config loads', async () => {
  const server = await startFakeServer();
  server.state.hang = true;
  const client = new Client({ apiKey: 'pk_test', baseUrl: server.url, logger: silent, requestTimeoutMs: 200 });
  assert.equal(client.assign('two-arms', 'u1'), null);
  assert.deepEqual(client.getPrompt('two-arms', 'u1', 'dflt'), { variant: null, prompt: 'dflt', fallback: true });
  assert.deepEqual(client.getVariables('two-arms', 'u1', { a: 1 }), { a: 1 });
  assert.equal(client.ready, false);
  server.state.hang = false;
  await client.close(100);
  await server.close();
});

test('names and ids assign alike; unknown experiments answer null', async () => {
  const { client, done } = await setup();
  await client.waitUntilReady(5000);
  const id = config.experiments[0].id;
  for (let i = 0; i < 200; i++) assert.equal(client.assign('two-arms', `u${i}`), client.assign(id, `u${i}`));
  assert.equal(client.assign('nope', 'u1'), null);
  await done();
});

test('exposures: one per (experiment, user, variant, UTC day)', () => {
  const log = new ExposureLog(10);
  let gen = 1;
  let answer = 'a';
  let hashed = 0;
  const exp = { id: 'e', get gen() { return gen; }, decide: () => { hashed++; return { variant: answer, inExperiment: true, reasonCode: 'bucketed' }; } };
  const day = 20_000;
  const due = (user, d, mode = EXPOSE_DAILY) => { log.resolve(exp, user, d, mode); return log.due; };
  assert.equal(due('u', day, EXPOSE_NONE), false, 'track() sends no exposure');
  assert.equal(due('u', day), true, 'assign() after track() sends the first');
  assert.equal(due('u', day), false);
  assert.equal(due('u', day, EXPOSE_ALWAYS), true, 'a model call always sends one');
  assert.equal(due('u', day), false);
  assert.equal(due('u', day + 1, EXPOSE_NONE), false);
  assert.equal(due('u', day + 1), true, 'a new UTC day');
  assert.equal(hashed, 1, 'track() and a warm assign() do not hash again');
  gen = 2;
  assert.equal(due('u', day + 1, EXPOSE_NONE), false);
  assert.equal(due('u', day + 1), false, 'new config, same variant, same day');
  gen = 3;
  answer = 'b';
  assert.equal(due('u', day + 1, EXPOSE_NONE), false, 'track() caches the new variant');
  assert.equal(due('u', day + 1), true, 'new config, new variant');
  assert.equal(log.resolve(exp, 'u', day + 1, EXPOSE_DAILY).variant, 'b');
  assert.equal(hashed, 3);
  for (let i = 0; i < 20; i++) due(`x${i}`, day);
  assert.equal(log.size, 10);
  let kept = 0;
  for (const users of log.byExperiment.values()) kept += users.size;
  assert.equal(kept, 10);
});

test('ETag polling: 304 keeps the config; a newer version is picked up', async () => {
  const { server, client, done } = await setup({ pollIntervalMs: 30 });
  await client.waitUntilReady(5000);
  await eventually(() => server.state.notModified >= 2, 5000, '304s');
  const ifNoneMatch = server.state.requests.filter((r) => r.url === '/v1/config').at(-1).headers['if-none-match'];
  assert.equal(ifNoneMatch, '"1"');
  server.state.config = scenario.configs[1];
  await eventually(() => client.configVersion === 2, 5000, 'version 2');
  await done();
});

test('retries honour Retry-After, then succeed once', async () => {
  const { server, client, done } = await setup({ maxRetries: 3 });
  await client.waitUntilReady(5000);
  server.state.failNext.push({ status: 429, retryAfter: 1 }, { status: 503 });
  client.track('purchase', { experiment_id: 'two-arms', user_id: 'u1', value: 2 });
  assert.equal(await client.flush(10_000), true);
  const posts = server.state.requests.filter((r) => r.url === '/v1/events');
  assert.equal(posts.length, 3);
  assert.ok(posts[1].at - posts[0].at >= 950, `retry came ${posts[1].at - posts[0].at} ms after a 429 with Retry-After: 1`);
  assert.equal(server.eventsOf('business_event').length, 1);
  assert.equal(client.droppedEvents, 0);
  await done();
});

test('a refused batch (400) is dropped and counted, not retried', async () => {
  const { server, client, done } = await setup();
  await client.waitUntilReady(5000);
  server.state.failNext.push({ status: 400 });
  client.track('purchase', { experiment_id: 'two-arms', user_id: 'u1' });
  await client.flush(5000);
  assert.equal(client.droppedEvents, 1);
  assert.equal(server.state.requests.filter((r) => r.url === '/v1/events').length, 1);
  await done();
});

test('track never throws or blocks: a full queue drops and counts', async () => {
  const { server, client, done } = await setup({ maxQueueSize: 5, flushIntervalMs: 60_000 });
  server.state.hang = true;
  const results = [];
  for (let i = 0; i < 8; i++) results.push(client.track('purchase', { experiment_id: 'x', user_id: `u${i}` }));
  assert.deepEqual(results, [true, true, true, true, true, false, false, false]);
  assert.equal(client.droppedEvents, 3);
  assert.equal(client.track('purchase', { get user_id() { throw new Error('boom'); } }), false);
  server.state.hang = false;
  await client.close(50);
  await server.close();
});

test('the spill file replays events younger than 24 h with their ids and timestamps, and drops older ones', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'expd-js-spill-'));
  const spillPath = join(dir, 'spill.jsonl');
  const now = Date.now();
  const fresh = { event_id: '11111111-1111-4111-8111-111111111111', type: 'business_event', timestamp: new Date(now - 23 * 3600_000).toISOString(), experiment_id: 'e', user_id: 'u', business_metric: 'm', value: 1 };
  const old = { ...fresh, event_id: '22222222-2222-4222-8222-222222222222', timestamp: new Date(now - 25 * 3600_000).toISOString() };
  writeFileSync(spillPath, `${JSON.stringify(fresh)}\n${JSON.stringify(old)}\nnot json\n`);
  const { server, client, done } = await setup({ spillPath });
  await eventually(() => server.state.events.length === 1, 5000, 'replay');
  assert.deepEqual(server.state.events[0], fresh);
  await done();
});

test('text fields are cut to the server bounds on whole characters', () => {
  assert.equal(cutUtf8('ab', 10), 'ab');
  assert.equal(cutUtf8('éé', 3), 'é');
  assert.equal(cutUtf8('x'.repeat(70_000), 65536).length, 65536);
});

test('an ack with a newer config_version refreshes at once', async () => {
  const { server, client, done } = await setup({ pollIntervalMs: 3_600_000 });
  await client.waitUntilReady(5000);
  server.state.config = scenario.configs[1];
  client.track('purchase', { experiment_id: 'two-arms', user_id: 'u1' });
  await client.flush(5000);
  await eventually(() => client.configVersion === 2, 5000, 'refresh after ack');
  await done();
});

test('the CommonJS build constructs a working client', async () => {
  const { createRequire } = await import('node:module');
  const cjs = createRequire(import.meta.url)('../dist/cjs/index.cjs');
  const server = await startFakeServer();
  server.state.config = config;
  const client = new cjs.Client({ apiKey: 'pk_test', baseUrl: server.url, logger: silent });
  assert.equal(await client.waitUntilReady(5000), true);
  assert.equal(client.assign('two-arms', 'user-1'), scenario.expected['two-arms'].variants[Number(scenario.expected['two-arms'].by_config[0][1])]);
  await client.close();
  await server.close();
});
