// The `expd dev` harness itself: a start that exits before its banner is run again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { START_ATTEMPTS, startExpdDev } from './expd-dev.js';

// Stands in for expd: its header says how.
const FAKE_EXPD = fileURLToPath(new URL('../../../testdata/harness/fake-expd-dev.sh', import.meta.url));

function fakeExpd(failures) {
  const state = mkdtempSync(join(tmpdir(), 'fake-expd-'));
  writeFileSync(join(state, 'fail-count'), String(failures));
  process.env.FAKE_EXPD_STATE = state;
  const starts = () => readFileSync(join(state, 'starts'), 'utf8').trim().split('\n').length;
  return { binary: FAKE_EXPD, starts };
}

test('a start of expd dev that exits before its banner is run again', async () => {
  const fake = fakeExpd(START_ATTEMPTS - 1);
  const dev = await startExpdDev(fake.binary);
  try {
    assert.equal(dev.baseUrl, 'http://127.0.0.1:4321');
    assert.equal(dev.apiKey, 'pk_fake');
    assert.equal(fake.starts(), START_ATTEMPTS);
  } finally {
    await dev.stop();
  }
});

test('the harness gives up after START_ATTEMPTS starts, with the stderr', async () => {
  const fake = fakeExpd(START_ATTEMPTS);
  await assert.rejects(startExpdDev(fake.binary), /exited with 1 before printing its API address(.|\n)*address already in use/);
  assert.equal(fake.starts(), START_ATTEMPTS);
});
