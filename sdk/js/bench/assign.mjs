// Per-call costs of the client on the caller's path, in one process:
// assign (warm: the config is loaded, each user already assigned on it and
// its exposure for today queued, so no hashing), assign of users seen for
// the first time (hash, exposure log insert, exposure queued), the pure-JS SHA-256 path (fetch-only runtimes), track
// (enqueue only), and, with --growthbook, GrowthBook's JS SDK on the same
// 50/50 experiment (installed into a temporary directory from npm, never a
// dependency of this package). Run: node bench/assign.mjs [--growthbook]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '../src/index.js';
import { Experiment } from '../src/config.js';
import { bucketOfDigest } from '../src/bucketing.js';
import { sha256Pure } from '../src/sha256.js';

const scenario = JSON.parse(readFileSync(new URL('../../../testdata/conformance/scenario.json', import.meta.url), 'utf8'));
const USERS = Array.from({ length: 1000 }, (_, i) => `user-${i}`);
const N = Number(process.env.BENCH_N ?? 300_000);

function perCall(label, fn, n = N) {
  for (let i = 0; i < n / 10; i++) fn(i); // warm-up (JIT)
  const runs = [];
  for (let r = 0; r < 5; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn(i);
    runs.push(Number(process.hrtime.bigint() - t0) / n);
  }
  runs.sort((a, b) => a - b);
  console.log(`${label.padEnd(46)} median ${(runs[2] / 1000).toFixed(3)} µs/call (best ${(runs[0] / 1000).toFixed(3)}, worst ${(runs[4] / 1000).toFixed(3)})`);
  return runs[2];
}

const client = new Client({ apiKey: 'pk_bench', baseUrl: 'http://127.0.0.1:9', maxQueueSize: 10_000_000, flushIntervalMs: 3_600_000, logger: { debug() {}, info() {}, warn() {}, error() {} } });
client.poller.close();
client.poller.install((await import('../src/config.js')).ConfigSnapshot.parse(scenario.configs[0], '"1"'), null);
let sink = null;
// Baseline in the same run: the SHA-256 alone, what any hash-based assignment pays.
const { sha256 } = await import('../src/sha256.js');
const prefix = `${scenario.configs[0].experiments[0].id}.${scenario.configs[0].experiments[0].salt}.`;
const bare = perCall('baseline: SHA-256 of the same input (node:crypto)', (i) => { sink = sha256(prefix + USERS[i % 1000]); });
const expd = perCall('expd assign (50/50, warm)', (i) => { sink = client.assign('two-arms', USERS[i % 1000]); });
const sticky = (await import('../src/config.js')).ConfigSnapshot.parse(scenario.configs[1], '"2"');
client.poller.install(sticky, client.poller.snapshot);
console.log(`ratio expd assign / bare SHA-256: ${(expd / bare).toFixed(2)}`);
perCall('expd assign (60/40 with sticky filter, warm)', (i) => { sink = client.assign('two-arms', USERS[i % 1000]); });
let fresh = 0;
// The queue is emptied every 10,000 calls, as the sender would: otherwise
// millions of retained events make the measurement one of the GC.
const drained = (i) => { if (i % 10_000 === 0) client.sender.queue.length = 0; };
perCall('expd assign, first sight of each user', (i) => { drained(i); sink = client.assign('two-arms', `new-${fresh++}`); }, 100_000);
client.sender.queue.length = 0;
const exp = new Experiment(scenario.configs[0].experiments[0]);
perCall('bucket with pure-JS SHA-256 (edge runtimes)', (i) => { sink = bucketOfDigest(sha256Pure(exp.prefix + USERS[i % 1000]), 10000); }, 200_000);
perCall('expd track (enqueue)', (i) => { drained(i); client.track('purchase', { experiment_id: 'two-arms', user_id: USERS[i % 1000], value: 1 }); }, 200_000);
client.sender.queue.length = 0;

if (process.argv.includes('--growthbook')) {
  const dir = mkdtempSync(join(tmpdir(), 'expd-gb-'));
  execFileSync('npm', ['install', '--silent', '--no-audit', '--no-fund', '--prefix', dir, '@growthbook/growthbook'], { stdio: 'inherit' });
  const gbPkg = createRequire(join(dir, 'package.json'))('@growthbook/growthbook');
  const version = JSON.parse(readFileSync(join(dir, 'node_modules/@growthbook/growthbook/package.json'), 'utf8')).version;
  const gb = new gbPkg.GrowthBook({ attributes: { id: 'user-0' }, trackingCallback: () => {} });
  await gb.setFeatures?.({ checkout: { defaultValue: 'control', rules: [{ key: 'two-arms', variations: ['control', 'treatment'], weights: [0.5, 0.5], hashAttribute: 'id' }] } });
  const gbRun = perCall(`GrowthBook ${version} run()`, (i) => {
    gb.setAttributes?.({ id: USERS[i % 1000] }) ?? (gb._ctx.attributes = { id: USERS[i % 1000] });
    sink = gb.run({ key: 'two-arms', variations: ['control', 'treatment'], weights: [0.5, 0.5] }).value;
  }, 200_000);
  const gbFeature = perCall(`GrowthBook ${version} getFeatureValue()`, (i) => {
    gb.setAttributes?.({ id: USERS[i % 1000] });
    sink = gb.getFeatureValue('checkout', 'control');
  }, 200_000);
  console.log(`ratio GrowthBook run / expd assign: ${(gbRun / expd).toFixed(1)}x; getFeatureValue / expd assign: ${(gbFeature / expd).toFixed(1)}x`);
}
void sink;
await client.close(10);
