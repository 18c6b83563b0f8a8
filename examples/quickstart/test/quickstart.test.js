// The quick start end to end: run.sh builds expd and fakellm, starts
// both, creates the experiment, sends the app's traffic, runs the
// analysis and checks the verdict; it must exit 0 and say so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

test('the quick start runs end to end and its verdict is the expected one', { timeout: 10 * 60_000 }, () => {
  const script = fileURLToPath(new URL('../run.sh', import.meta.url));
  const res = spawnSync('bash', [script], { encoding: 'utf8', timeout: 9 * 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
  if (res.status !== 0) {
    console.error(res.stdout.slice(-8000));
    console.error(res.stderr.slice(-8000));
  }
  assert.equal(res.status, 0, `run.sh exited ${res.status} (${res.signal ?? 'no signal'})`);
  assert.match(res.stdout, /verdict as expected: keep_running/);
  assert.match(res.stdout, /"sent":true/);
});
