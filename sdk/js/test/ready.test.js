// waitUntilReady always settles, so a caller's fallback runs: a new user's
// script awaiting it against a server that was down ended with Node's exit
// code 13 (unsettled top-level await) because its only timer was unref'd.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('../src/index.js', import.meta.url));

// A script as a user writes it: top-level await, then the fallback.
function script(baseUrl, timeoutMs) {
  return `
    import { Client } from ${JSON.stringify(entry)};
    const quiet = { debug() {}, info() {}, warn() {}, error() {} };
    const client = new Client({ apiKey: 'expd_pk_test', baseUrl: ${JSON.stringify(baseUrl)}, logger: quiet });
    const ready = await client.waitUntilReady(${timeoutMs});
    console.log('fallback runs, ready=' + ready);
    await client.close(0);
  `;
}

function runChild(source) {
  return new Promise((resolve) => {
    // Not spawnSync: it would block the event loop serving the fake server.
    import('node:child_process').then(({ spawn }) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', source], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      child.on('close', (code) => resolve({ code, out, err }));
    });
  });
}

test('waitUntilReady settles false when the server is down, and the process goes on', async () => {
  // A port nobody listens on: bind one, note it, close it.
  const probe = createServer();
  await new Promise((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address();
  await new Promise((r) => probe.close(r));
  const { code, out, err } = await runChild(script(`http://127.0.0.1:${port}`, 300));
  assert.equal(code, 0, `exit ${code}: ${err}`);
  assert.match(out, /fallback runs, ready=false/);
});

test('waitUntilReady settles false at once when the key is refused (revoked)', { timeout: 60_000 }, async () => {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    res.writeHead(401, { 'Content-Type': 'application/problem+json' });
    res.end(JSON.stringify({ type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'api key revoked' }));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    // Ten minutes: only the refusal can settle it within the test's timeout.
    const { code, out, err } = await runChild(script(`http://127.0.0.1:${server.address().port}`, 600_000));
    assert.equal(code, 0, `exit ${code}: ${err}`);
    assert.match(out, /fallback runs, ready=false/);
    assert.ok(requests >= 1);
  } finally {
    await new Promise((r) => server.close(r));
  }
});
