// The package on a fetch-only runtime (edge functions, workers): the
// sources run in a V8 context without process, Buffer or any node: module
// (test/edge-runner.mjs), load the config, assign as the conformance
// scenario expects and deliver events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startFakeServer } from './helpers.js';

const scenario = JSON.parse(readFileSync(new URL('../../../testdata/conformance/scenario.json', import.meta.url), 'utf8'));

test('a fetch-only runtime: config, assign, events', async () => {
  const server = await startFakeServer();
  try {
    server.state.config = scenario.configs[0];
    const runner = fileURLToPath(new URL('./edge-runner.mjs', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, ['--experimental-vm-modules', '--no-warnings', runner, server.url], { timeout: 120_000 });
    const out = JSON.parse(stdout.trim().split('\n').pop());
    assert.equal(out.globals, 'undefined,undefined,undefined,undefined');
    assert.equal(out.nodeBuiltins, 0, 'no node: module loaded');
    assert.equal(out.ready, true);
    assert.equal(out.mismatches, 0, 'assign differs from the conformance scenario');
    assert.equal(out.tracked, true);
    assert.equal(out.boundUser, 'ran');
    assert.equal(out.flushed, true);
    assert.equal(server.eventsOf('exposure').length, 3000);
    const [purchase] = server.eventsOf('business_event');
    assert.equal(purchase.business_metric, 'purchase');
    assert.equal(purchase.experiment_id, scenario.configs[0].experiments.find((e) => e.name === 'two-arms').id);
    assert.match(purchase.event_id, /^[0-9a-f-]{36}$/);
  } finally {
    await server.close();
  }
});
