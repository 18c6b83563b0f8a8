// The provider through the official OpenFeature server SDK, against the
// client test suite's fake expd: every shared decision case, the reason
// mapping, errors, and exposures recorded by the after hook only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ErrorCode, OpenFeature, StandardResolutionReasons } from '@openfeature/server-sdk';
import { Client } from 'expd';
import { eventually, silent, startFakeServer } from '../../js/test/helpers.js';
import { ExpdProvider, REASONS, attributesOf } from '../src/index.js';

const scenario = JSON.parse(readFileSync(new URL('../../../testdata/conformance/scenario.json', import.meta.url), 'utf8'));
const { decisions } = scenario;

async function withProvider(config, fn) {
  const server = await startFakeServer();
  server.state.config = config;
  const client = new Client({ apiKey: 'pk_test', baseUrl: server.url, flushIntervalMs: 20, logger: silent });
  const provider = new ExpdProvider(client);
  const domain = `expd-${Math.random()}`;
  await OpenFeature.setProviderAndWait(domain, provider);
  try {
    await fn(OpenFeature.getClient(domain), server, client);
  } finally {
    await OpenFeature.clearProviders();
    await client.close(1000);
    await server.close();
  }
}

test('every reason code of the shared decision cases has an OpenFeature reason', () => {
  for (const c of decisions.cases) assert.ok(REASONS[c.reason_code], `no OpenFeature reason for ${c.reason_code}`);
  assert.deepEqual(
    { bucketed: REASONS.bucketed, pinned: REASONS.pinned, not_running: REASONS.not_running, shipped: REASONS.shipped },
    { bucketed: 'SPLIT', pinned: 'TARGETING_MATCH', not_running: 'DISABLED', shipped: 'STATIC' },
  );
  for (const code of ['not_targeted', 'holdout', 'layer']) assert.equal(REASONS[code], StandardResolutionReasons.DEFAULT);
});

test('string flags answer the shared decision cases: variant and mapped reason', async () => {
  const byConfig = new Map();
  for (const c of decisions.cases) byConfig.set(c.config, [...(byConfig.get(c.config) ?? []), c]);
  for (const [index, cases] of byConfig) {
    await withProvider(decisions.configs[index], async (flags) => {
      for (const c of cases) {
        const details = await flags.getStringDetails(c.experiment, 'fallback', { targetingKey: c.user_id, ...c.attributes });
        const what = `${c.experiment}/${c.user_id}`;
        assert.equal(details.errorCode, undefined, `${what}: ${details.errorMessage}`);
        assert.equal(details.value, c.variant, what);
        assert.equal(details.variant, c.variant, what);
        assert.equal(details.reason, REASONS[c.reason_code], what);
        assert.equal(details.flagMetadata.inExperiment, c.in_experiment, what);
        assert.equal(details.flagMetadata.reasonCode, c.reason_code, what);
      }
    });
  }
});

test('object flags answer the variant\'s variables, the default when it has none', async () => {
  const config = scenario.configs[0];
  const experiment = config.experiments[0];
  await withProvider(config, async (flags, _server, client) => {
    for (let i = 0; i < 50; i++) {
      const user = `user-${i}`;
      const variant = client.peekDetail(experiment.name, user).variant;
      const want = experiment.variants[variant]?.variables ?? { untouched: true };
      assert.deepEqual(await flags.getObjectValue(experiment.name, { untouched: true }, { targetingKey: user }), want);
    }
  });
});

test('errors answer the default with OpenFeature\'s error codes and record nothing', async () => {
  const config = scenario.configs[0];
  await withProvider(config, async (flags, server, client) => {
    const unknown = await flags.getStringDetails('no-such-experiment', 'dflt', { targetingKey: 'u1' });
    assert.deepEqual([unknown.value, unknown.reason, unknown.errorCode], ['dflt', 'ERROR', ErrorCode.FLAG_NOT_FOUND]);
    const noUser = await flags.getStringDetails(config.experiments[0].name, 'dflt', {});
    assert.deepEqual([noUser.value, noUser.reason, noUser.errorCode], ['dflt', 'ERROR', ErrorCode.TARGETING_KEY_MISSING]);
    const asBool = await flags.getBooleanDetails(config.experiments[0].name, false, { targetingKey: 'u1' });
    assert.deepEqual([asBool.value, asBool.errorCode], [false, ErrorCode.TYPE_MISMATCH]);
    await client.flush(2000);
    assert.equal(server.eventsOf('exposure').length, 0);
  });
});

test('the after hook records one exposure per user and day for users in the experiment, none before evaluation', async () => {
  const config = scenario.configs[0];
  const experiment = config.experiments[0];
  await withProvider(config, async (flags, server, client) => {
    assert.equal(client.peekDetail(experiment.name, 'u-peek').inExperiment, true);
    await client.flush(2000);
    assert.equal(server.eventsOf('exposure').length, 0, 'peeking records nothing');
    for (let i = 0; i < 3; i++) await flags.getStringValue(experiment.name, 'x', { targetingKey: 'u-hook' });
    await client.flush(2000);
    await eventually(() => server.eventsOf('exposure').length === 1, 5000, 'one exposure');
    const [exposure] = server.eventsOf('exposure');
    assert.equal(exposure.user_id, 'u-hook');
    assert.equal(exposure.experiment_id, experiment.id);
    assert.equal(exposure.variant, client.peekDetail(experiment.name, 'u-hook').variant);
  });
});

test('a stopped experiment answers control as DISABLED and records no exposure', async () => {
  const config = decisions.configs[0];
  const stopped = config.experiments.find((e) => e.status === 'stopped');
  await withProvider(config, async (flags, server, client) => {
    const details = await flags.getStringDetails(stopped.name, 'dflt', { targetingKey: 'u1' });
    assert.deepEqual([details.value, details.reason], [stopped.control, 'DISABLED']);
    await client.flush(2000);
    assert.equal(server.eventsOf('exposure').length, 0);
  });
});

test('initialize fails when no config loads, so the SDK reports the provider in error', async () => {
  const server = await startFakeServer('pk_other'); // refuses our key
  const client = new Client({ apiKey: 'pk_test', baseUrl: server.url, logger: silent });
  const provider = new ExpdProvider(client, { readyTimeoutMs: 2000 });
  await assert.rejects(OpenFeature.setProviderAndWait('refused', provider));
  const details = await OpenFeature.getClient('refused').getStringDetails('any', 'dflt', { targetingKey: 'u1' });
  assert.equal(details.value, 'dflt');
  assert.equal(details.reason, 'ERROR');
  await OpenFeature.clearProviders();
  await client.close(100);
  await server.close();
});

test('attributesOf drops the targeting key and keeps the rest', () => {
  assert.deepEqual(attributesOf({ targetingKey: 'u', plan: 'pro', country: 'DE' }), { plan: 'pro', country: 'DE' });
  assert.deepEqual(attributesOf(undefined), {});
});
