// The language-neutral conformance scenario (testdata/conformance/scenario.json,
// ops described in testdata/conformance/README.md), replayed against the fake server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '../src/index.js';
import { Experiment } from '../src/config.js';
import { eventually, silent, startFakeServer } from './helpers.js';

const scenario = JSON.parse(readFileSync(new URL('../../../testdata/conformance/scenario.json', import.meta.url), 'utf8'));
const user = (i) => `${scenario.user_prefix}${i}`;

function expectedVariant(experiment, config, i) {
  const e = scenario.expected[experiment];
  return e.variants[Number(e.by_config[config][i])];
}

test('sticky cases: small filters, false positives and exceptions', () => {
  for (const c of scenario.sticky_cases) {
    const exp = new Experiment({ id: c.experiment_id, name: 'x', salt: c.salt, bucket_count: c.bucket_count, bucket_map: c.map, sticky: c.sticky });
    c.users.forEach((u, i) => assert.equal(exp.decide(u).variant, c.variants[i], `${c.experiment_id} ${u}`));
  }
});

test('decision cases: assignDetail on a client served each case\'s config', async () => {
  const { configs, cases } = scenario.decisions;
  assert.ok(cases.length > 0);
  const servers = [];
  const clients = [];
  try {
    for (const config of configs) {
      const server = await startFakeServer();
      servers.push(server);
      server.state.config = config;
      const client = new Client({ apiKey: 'pk_test', baseUrl: server.url, flushIntervalMs: 3_600_000, logger: silent });
      clients.push(client);
      assert.ok(await client.waitUntilReady(10_000));
    }
    for (const c of cases) {
      const want = { variant: c.variant, inExperiment: c.in_experiment, reasonCode: c.reason_code };
      assert.deepEqual({ ...clients[c.config].assignDetail(c.experiment, c.user_id, c.attributes) }, want, `${c.experiment} ${c.user_id}`);
    }
    // The holdout exposures: once per (holdout, user) of each client.
    for (const [i, client] of clients.entries()) {
      const want = new Set();
      const holdouts = new Set();
      for (const c of cases) {
        if (c.config !== i) continue;
        for (const h of c.holdout_exposures ?? []) {
          want.add(`${h.holdout_id} ${c.user_id} ${h.variant}`);
          holdouts.add(h.holdout_id);
        }
      }
      await client.flush();
      const got = servers[i].eventsOf('exposure').filter((e) => holdouts.has(e.experiment_id)).map((e) => `${e.experiment_id} ${e.user_id} ${e.variant}`);
      assert.ok(want.size > 0 || i > 0);
      assert.deepEqual(got.sort(), [...want].sort(), `config ${i}: holdout exposures`);
    }
  } finally {
    for (const client of clients) await client.close(0);
    for (const server of servers) await server.close();
  }
});

test('the scripted scenario', async () => {
  const server = await startFakeServer();
  const spillPath = join(mkdtempSync(join(tmpdir(), 'expd-js-')), 'spill.jsonl');
  const seen = {};
  let client = null;
  let spilled = [];
  const latencies = [];
  const fresh = (type) => {
    const all = server.eventsOf(type);
    const out = all.slice(seen[type] ?? 0);
    seen[type] = all.length;
    return out;
  };
  try {
    for (const step of scenario.steps) {
      const where = JSON.stringify(step);
      switch (step.op) {
        case 'serve_config':
          server.state.config = scenario.configs[step.config];
          break;
        case 'start_client':
          client = new Client({ apiKey: 'pk_test', baseUrl: server.url, spillPath, flushIntervalMs: 50, maxRetries: 1,
            retryBackoffMs: 10, maxQueueSize: 100_000, logger: silent });
          break;
        case 'wait_config_version':
          await eventually(() => client.configVersion === step.version, 10_000, where);
          break;
        case 'assign':
          for (let i = step.from; i < step.to; i++) {
            assert.equal(client.assign(step.experiment, user(i)), expectedVariant(step.experiment, step.config, i), `${where} user ${i}`);
          }
          break;
        case 'get_prompt':
          for (let i = step.from; i < step.to; i++) {
            const variant = expectedVariant(step.experiment, step.config, i);
            const exp = scenario.configs[step.config].experiments.find((e) => e.name === step.experiment);
            assert.deepEqual(client.getPrompt(step.experiment, user(i), 'default'), { variant, prompt: exp.variants[variant].prompt, fallback: false });
            assert.deepEqual(client.getVariables(step.experiment, user(i), { arm: 'none', other: 1 }), { arm: variant, other: 1 });
          }
          break;
        case 'flush':
          assert.equal(await client.flush(20_000), true, where);
          break;
        case 'expect_events': {
          const got = fresh(step.type);
          assert.equal(got.length, step.count, where);
          if (step.expect?.same_as_spilled) {
            const key = (e) => `${e.event_id} ${e.timestamp}`;
            assert.deepEqual(got.map(key).sort(), spilled.map(key).sort());
          }
          break;
        }
        case 'ack_config_version':
          server.state.ackVersion = step.version;
          break;
        case 'track': {
          assert.equal(client.track(step.event, step.payload), true);
          await client.flush(10_000);
          const last = server.eventsOf(step.expect.type).at(-1);
          for (const [k, v] of Object.entries(step.expect)) assert.deepEqual(last[k], v, `${where} field ${k}`);
          assert.equal(last.variant, client.assign(step.payload.experiment_id, step.payload.user_id));
          break;
        }
        case 'server_down':
          server.state.down = true;
          break;
        case 'server_up':
          server.state.down = false;
          break;
        case 'track_many':
          for (let i = step.from; i < step.to; i++) {
            const t0 = performance.now();
            assert.equal(client.track(step.event, { experiment_id: step.experiment, user_id: user(i), value: 1 }), true);
            latencies.push(performance.now() - t0);
          }
          break;
        case 'close_client':
          await client.close();
          break;
        case 'expect_spilled':
          assert.ok(existsSync(spillPath), where);
          spilled = readFileSync(spillPath, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
          assert.equal(spilled.length, step.count, where);
          break;
        default:
          throw new Error(`unknown op ${step.op}`);
      }
    }
  } finally {
    await client?.close();
    await server.close();
  }
  latencies.sort((a, b) => a - b);
  console.log(`# track while the server is down: median ${latencies[latencies.length >> 1].toFixed(4)} ms, max ${latencies.at(-1).toFixed(4)} ms`);
});
