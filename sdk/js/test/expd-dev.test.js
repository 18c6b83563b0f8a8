// The `expd dev` harness itself: a start that exits before its banner is run again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { START_ATTEMPTS, startExpdDev } from './expd-dev.js';

// Stands in for the expd binary: exits 1 while $FAKE_EXPD_STATE/fail-count holds
// a positive number (counting it down), then writes the credentials, prints
// the banner and waits for SIGINT like `expd dev`.
const FAKE_EXPD = `#!/bin/sh
while [ "$#" -gt 0 ]; do [ "$1" = --data-dir ] && dir="$2"; shift; done
echo start >> "$FAKE_EXPD_STATE/starts"
left=$(cat "$FAKE_EXPD_STATE/fail-count")
if [ "$left" -gt 0 ]; then echo $((left - 1)) > "$FAKE_EXPD_STATE/fail-count"; echo "bind: address already in use" >&2; exit 1; fi
echo '{"publishable_key": "pk_fake", "identity_jwt": "jwt"}' > "$dir/dev-credentials.json"
echo "  API:         http://127.0.0.1:4321"
trap 'exit 0' INT
while :; do sleep 0.1; done
`;

function fakeExpd(failures) {
  const state = mkdtempSync(join(tmpdir(), 'fake-expd-'));
  const binary = join(state, 'expd');
  writeFileSync(binary, FAKE_EXPD);
  chmodSync(binary, 0o700);
  writeFileSync(join(state, 'fail-count'), String(failures));
  process.env.FAKE_EXPD_STATE = state;
  const starts = () => readFileSync(join(state, 'starts'), 'utf8').trim().split('\n').length;
  return { binary, starts };
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
