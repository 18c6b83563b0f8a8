// Cost recorded by itself: the embedded price table, the shared vectors, and cost_usd on measured calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Client } from '../src/index.js';
import { PriceTable } from '../src/pricing.js';
import { usageOf } from '../src/shapes.js';
import { canonicalPath, copyPath, render } from '../scripts/prices.mjs';
import { silent, startFakeServer } from './helpers.js';

const vectors = JSON.parse(readFileSync(new URL('../../../testdata/prices/vectors.json', import.meta.url), 'utf8'));
const scenario = JSON.parse(readFileSync(new URL('../../../testdata/conformance/scenario.json', import.meta.url), 'utf8'));

test('src/prices.js carries the canonical table verbatim (run sdk/prices/sync.sh after editing it)', () => {
  assert.equal(readFileSync(copyPath, 'utf8'), render(readFileSync(canonicalPath, 'utf8')));
});

test('the shared vectors', () => {
  const tolerance = vectors.tolerance.relative;
  for (const [section, table] of [['cases', new PriceTable({}, silent)], ['override_cases', new PriceTable(vectors.overrides, silent)]]) {
    for (const c of vectors[section]) {
      const [input, output] = usageOf({ usage: c.usage }) ?? [null, null];
      const got = table.cost(c.model, input, output);
      if (c.cost_usd === null) assert.equal(got, null, c.what);
      else assert.ok(got !== null && Math.abs(got - c.cost_usd) <= tolerance * Math.abs(c.cost_usd), `${c.what}: ${got} != ${c.cost_usd}`);
    }
  }
});

test('an unknown model is logged once', () => {
  const lines = [];
  const table = new PriceTable({}, { ...silent, info: (m) => lines.push(m) });
  for (let i = 0; i < 3; i++) assert.equal(table.cost('acme-1', 10, 10), null);
  table.cost('acme-2', 10, 10);
  assert.equal(lines.length, 2);
  assert.match(lines[0], /acme-1/);
});

test('wrap prices the usage it reads; client prices override; an explicit cost and a per-call price win', async () => {
  const server = await startFakeServer();
  server.state.config = scenario.configs[0];
  const client = new Client({ apiKey: 'pk_test', baseUrl: server.url, flushIntervalMs: 20, logger: silent, modelPrices: { 'acme-1': [1e-6, 1e-6] } });
  await client.waitUntilReady(5000);
  const provider = {
    chat: { completions: { create: async (b) => ({ model: `${b.model}-2024-08-06`, choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } }) } },
    responses: { create: async (b) => ({ model: b.model, output_text: 'hi', usage: { input_tokens: 5, output_tokens: 3 } }) },
  };
  const openai = client.wrap(provider, 'two-arms');
  await client.asUser('u1', async () => {
    await openai.chat.completions.create({ model: 'gpt-4o-mini' });
    await openai.responses.create({ model: 'claude-haiku-4-5' });
    await openai.chat.completions.create({ model: 'acme-1' });
    await openai.chat.completions.create({ model: 'acme-2' });
  });
  await client.interceptModelCall('two-arms', 'u1', async (call) => {
    call.model = 'gpt-4o';
    call.setUsage(100, 100);
    call.costUsd = 0.5;
  });
  await client.interceptModelCall('two-arms', 'u1', async (call) => call.setUsage(1000, 50), { model: 'gpt-4o', price: { input: 1e-9, output: 0 } });
  await client.flush(5000);
  const costs = server.eventsOf('model_call').map((e) => e.cost_usd);
  const close = (a, b) => Math.abs(a - b) <= 1e-15;
  assert.ok(close(costs[0], 11 * 0.15e-6 + 7 * 0.6e-6), String(costs[0]));
  assert.ok(close(costs[1], 5e-6 + 3 * 5e-6), String(costs[1]));
  assert.ok(close(costs[2], 18e-6), String(costs[2]));
  assert.equal(costs[3], undefined);
  assert.equal(costs[4], 0.5);
  assert.ok(close(costs[5], 1e-6), String(costs[5]));
  await client.close();
  await server.close();
});
