// The provider through the official OpenFeature SDK against a real `expd dev`
// built from this checkout: equal to POST /v1/assign for 10,000 users.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpenFeature } from '@openfeature/server-sdk';
import { Client } from 'expd';
import { experimentConfig, inParallel, liveDev } from '../../js/test/expd-dev.js';
import { silent } from '../../js/test/helpers.js';
import { ExpdProvider, REASONS } from '../src/index.js';

const live = liveDev();

test('string flag details equal /v1/assign for 10,000 users (variant, reason), exposures only for users in it',
  { skip: live.skip, timeout: 600_000 }, async () => {
    const name = 'of-agree';
    await live.dev.createExperiment(experimentConfig(name, [['control', 34], ['short', 33], ['long', 33]]));
    const client = new Client({ apiKey: live.dev.apiKey, baseUrl: live.dev.baseUrl, pollIntervalMs: 500, maxQueueSize: 100_000, logger: silent });
    await OpenFeature.setProviderAndWait('live', new ExpdProvider(client));
    const flags = OpenFeature.getClient('live');
    const users = Array.from({ length: 10_000 }, (_, i) => `of-user-${i}`);
    const served = await inParallel(users, 8, (u) => live.dev.assign(name, u));
    const counts = {};
    for (let i = 0; i < users.length; i++) {
      const details = await flags.getStringDetails(name, 'fallback', { targetingKey: users[i] });
      assert.equal(details.value, served[i].variant, users[i]);
      assert.equal(details.reason, REASONS[served[i].reason_code], users[i]);
      counts[details.value] = (counts[details.value] ?? 0) + 1;
    }
    // Three arms, every one served (a constant answer would pass the equality only if the server agreed).
    assert.deepEqual(Object.keys(counts).sort(), ['control', 'long', 'short']);
    assert.equal(await client.flush(60_000), true);
    await OpenFeature.clearProviders();
    await client.close();
  });
