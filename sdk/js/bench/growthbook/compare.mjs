// expd's assign next to GrowthBook's JS SDK (@growthbook/growthbook, this
// folder's only dependency; never one of the expd package) in one process,
// on the same 50/50 experiment, warm: the config/features loaded, each of
// 1,000 users' context built ahead and, for expd, assigned once (its
// exposure for today queued). Both are checked to split the users about
// 50/50 before timing. Ratios to a bare SHA-256 of the same input timed in
// the same run. Run: npm install && node compare.mjs (or npm run bench).
import { readFileSync } from 'node:fs';
import { GrowthBook, GrowthBookClient } from '@growthbook/growthbook';
import { sha256 } from '../../src/sha256.js';
import { HASH_PREFIX, USERS, perCall, sideBySide, warmClient } from '../lib.mjs';

const version = JSON.parse(readFileSync(new URL('./node_modules/@growthbook/growthbook/package.json', import.meta.url), 'utf8')).version;
const experiment = { key: 'two-arms', variations: ['control', 'treatment'], weights: [0.5, 0.5], hashAttribute: 'id' };
const features = { checkout: { defaultValue: 'control', rules: [{ key: 'two-arms', variations: ['control', 'treatment'], weights: [0.5, 0.5], hashAttribute: 'id' }] } };

const expd = warmClient('http://127.0.0.1:9', { flushIntervalMs: 3_600_000, maxQueueSize: 1_000_000 });
// GrowthBook's server-side client: one instance, a user context per call.
const gbClient = new GrowthBookClient().initSync({ payload: { features } });
const contexts = USERS.map((id) => ({ attributes: { id } }));
// GrowthBook's classic instance, one per user (what a request handler builds).
const instances = USERS.map((id) => new GrowthBook({ attributes: { id }, features }));

const control = (pick) => USERS.filter((_, i) => pick(i) === 'control').length;
const splits = {
  'expd assign': control((i) => expd.assign('two-arms', USERS[i])),
  'GrowthBookClient runInlineExperiment': control((i) => gbClient.runInlineExperiment(experiment, contexts[i]).value),
  'GrowthBookClient evalFeature': control((i) => gbClient.evalFeature('checkout', contexts[i]).value),
  'GrowthBook run': control((i) => instances[i].run(experiment).value),
  'GrowthBook evalFeature': control((i) => instances[i].evalFeature('checkout').value),
};
for (const [name, n] of Object.entries(splits)) {
  if (n < 430 || n > 570) throw new Error(`${name}: ${n} of 1,000 users in control: not the 50/50 experiment`);
}

let sink = null;
// Means of timed loops (median of 5 runs), then single calls' p50/p99 in
// interleaved rounds (the figure to quote on a shared machine).
const bare = perCall('baseline: SHA-256 of the same input', (i) => { sink = sha256(HASH_PREFIX + USERS[i % 1000]); });
const calls = [
  ['baseline: SHA-256 of the same input', (i) => { sink = sha256(HASH_PREFIX + USERS[i % 1000]); }],
  ['expd assign (warm)', (i) => { sink = expd.assign('two-arms', USERS[i % 1000]); }],
  [`GrowthBookClient ${version} runInlineExperiment`, (i) => { sink = gbClient.runInlineExperiment(experiment, contexts[i % 1000]).value; }],
  [`GrowthBookClient ${version} evalFeature`, (i) => { sink = gbClient.evalFeature('checkout', contexts[i % 1000]).value; }],
  [`GrowthBook ${version} run`, (i) => { sink = instances[i % 1000].run(experiment).value; }],
  [`GrowthBook ${version} evalFeature`, (i) => { sink = instances[i % 1000].evalFeature('checkout').value; }],
];
const means = calls.slice(1).map(([label, fn]) => [label, perCall(label, fn, 100_000)]);
for (const [label, ns] of means) {
  console.log(`  ${label.padEnd(44)} ${(ns / bare).toFixed(2)}x the bare SHA-256, ${(ns / means[0][1]).toFixed(1)}x expd assign`);
}
sideBySide(calls);
void sink;
gbClient.destroy();
for (const gb of instances) gb.destroy();
await expd.close(10);
