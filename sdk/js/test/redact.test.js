// Redaction: every case of the shared corpus (testdata/redaction/cases.json,
// rules in testdata/redaction/README.md), and the client option that applies
// it to model calls before they leave the process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Client, redact } from '../src/index.js';
import { compilePatterns } from '../src/redact.js';
import { silent, startFakeServer } from './helpers.js';

const { cases } = JSON.parse(readFileSync(new URL('../../../testdata/redaction/cases.json', import.meta.url), 'utf8'));
const scenario = JSON.parse(readFileSync(new URL('../../../testdata/conformance/scenario.json', import.meta.url), 'utf8'));
const EMAIL = 'ann.lee@example.com';
const CARD = '4111 1111 1111 1111';

test('the corpus is the shared one', () => {
  assert.ok(cases.length >= 200, `${cases.length} cases`);
});

test('every case of the corpus', () => {
  for (const c of cases) {
    assert.equal(redact(c.input, compilePatterns(c.custom_patterns)), c.expected, `${c.name}: ${JSON.stringify(c.input)}`);
  }
});

test('redacting twice changes nothing', () => {
  for (const c of cases) if (!c.custom_patterns) assert.equal(redact(c.expected), c.expected, c.name);
});

test('a bad custom regex is refused at construction', () => {
  assert.throws(() => new Client({ apiKey: 'pk_test', baseUrl: 'http://127.0.0.1:9', logger: silent, redactPatterns: [{ name: 'bad', regex: '(' }] }),
    /redactPatterns\[0\]\.regex/);
});

async function setup(options) {
  const server = await startFakeServer();
  server.state.config = scenario.configs[0];
  const client = new Client({ apiKey: 'pk_test', baseUrl: server.url, flushIntervalMs: 20, logger: silent, ...options });
  await client.waitUntilReady(5000);
  return { server, client };
}

async function record(options, prompt, response) {
  const { server, client } = await setup(options);
  try {
    await client.interceptModelCall('two-arms', 'u1', (call) => { call.response = response; }, { model: 'gpt-4o', prompt });
    await client.flush(5000);
    return server.eventsOf('model_call');
  } finally {
    await client.close();
    await server.close();
  }
}

test('off by default', async () => {
  const [call] = await record({}, `mail ${EMAIL}`, `card ${CARD}`);
  assert.deepEqual([call.prompt, call.response], [`mail ${EMAIL}`, `card ${CARD}`]);
});

test('redact: true replaces the built-ins in prompt and response, wrapped calls included', async () => {
  const [call] = await record({ redact: true }, `mail ${EMAIL}`, `card ${CARD}, key sk-abcdefghijklmnopqrstuvwx`);
  assert.deepEqual([call.prompt, call.response], ['mail [EMAIL]', 'card [CARD], key [SECRET]']);

  const { server, client } = await setup({ redact: true });
  const provider = { chat: { completions: { create: async () => ({ model: 'gpt-4o', choices: [{ message: { content: `write to ${EMAIL}` } }] }) } } };
  const openai = client.wrap(provider, 'two-arms');
  await client.asUser('u2', () => openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: `I am ${EMAIL}` }] }));
  await client.flush(5000);
  const [wrapped] = server.eventsOf('model_call');
  assert.ok(wrapped.prompt.includes('I am [EMAIL]'), wrapped.prompt);
  assert.equal(wrapped.response, 'write to [EMAIL]');
  assert.ok(!JSON.stringify(server.state.events).includes(EMAIL));
  await client.close();
  await server.close();
});

test('the error of a failed call is redacted too', async () => {
  const { server, client } = await setup({ redact: true });
  await assert.rejects(client.interceptModelCall('two-arms', 'u1', () => { throw new Error(`invalid api key sk-abcdefghijklmnopqrstuvwx for ${EMAIL}`); }));
  await client.flush(5000);
  const [call] = server.eventsOf('model_call');
  assert.equal(call.error, 'Error: invalid api key [SECRET] for [EMAIL]');
  await client.close();
  await server.close();
});

test('custom patterns run first and turn redaction on', async () => {
  const [call] = await record({ redactPatterns: [{ name: 'employee', regex: 'EMP-[0-9]{6}', placeholder: '[EMPLOYEE]' }] }, `EMP-123456 ${EMAIL}`, 'fine');
  assert.equal(call.prompt, '[EMPLOYEE] [EMAIL]');
});

test('a hook runs after the built-ins; a failing hook fails closed', async () => {
  const seen = [];
  const [call] = await record({ redact: (t) => { seen.push(t); return t.replace('Ann', '[NAME]'); } }, `Ann is ${EMAIL}`, 'ok');
  assert.equal(call.prompt, '[NAME] is [EMAIL]');
  assert.ok(seen.includes('Ann is [EMAIL]'));
  const [failed] = await record({ redact: () => { throw new Error('boom'); } }, `Ann is ${EMAIL}`, 'ok');
  assert.deepEqual([failed.prompt, failed.response], ['[REDACTED]', '[REDACTED]']);
  const [wrongType] = await record({ redact: () => 42 }, `Ann is ${EMAIL}`, 'ok');
  assert.equal(wrongType.prompt, '[REDACTED]');
});
