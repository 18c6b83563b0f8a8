// Per-call costs of the client on the caller's path, in one process:
// assign (warm: the config is loaded, each user already assigned on it and
// its exposure for today queued, so no hashing), assign of users seen for
// the first time (hash, exposure log insert, exposure queued), the pure-JS
// SHA-256 path (fetch-only runtimes) and track (enqueue; the variant from
// assign's cache), each as a ratio to a bare SHA-256 of the same input
// timed in the same run. GrowthBook side by side: bench/growthbook; the
// caller's latency while the server is down: bench/down.mjs.
// Run: node bench/assign.mjs
import { Experiment } from '../src/config.js';
import { bucketOfDigest } from '../src/bucketing.js';
import { sha256, sha256Pure } from '../src/sha256.js';
import { HASH_PREFIX, USERS, loadLine, perCall, scenario, snapshotOf, warmClient } from './lib.mjs';

console.log(loadLine());
const client = warmClient('http://127.0.0.1:9', { maxQueueSize: 10_000_000, flushIntervalMs: 3_600_000 });
let sink = null;
const ratio = (ns) => `${(ns / bare).toFixed(2)}x the bare SHA-256`;
// Baseline in the same run: the SHA-256 alone, what any hash-based assignment pays.
const bare = perCall('baseline: SHA-256 of the same input (node:crypto)', (i) => { sink = sha256(HASH_PREFIX + USERS[i % 1000]); });
const expd = perCall('expd assign (50/50, warm)', (i) => { sink = client.assign('two-arms', USERS[i % 1000]); });
console.log(`  ${ratio(expd)}`);
client.poller.install(snapshotOf(1), client.poller.snapshot);
for (const u of USERS) client.assign('two-arms', u);
const sticky = perCall('expd assign (60/40 with sticky filter, warm)', (i) => { sink = client.assign('two-arms', USERS[i % 1000]); });
console.log(`  ${ratio(sticky)}`);
let fresh = 0;
// The queue is emptied every 10,000 calls, as the sender would: otherwise
// millions of retained events make the measurement one of the GC.
const drained = (i) => { if (i % 10_000 === 0) client.sender.queue.length = 0; };
const first = perCall('expd assign, first sight of each user', (i) => { drained(i); sink = client.assign('two-arms', `new-${fresh++}`); }, 100_000);
console.log(`  ${ratio(first)}`);
client.sender.queue.length = 0;
const exp = new Experiment(scenario.configs[0].experiments[0]);
const pure = perCall('bucket with pure-JS SHA-256 (edge runtimes)', (i) => { sink = bucketOfDigest(sha256Pure(exp.prefix + USERS[i % 1000]), 10000); }, 200_000);
console.log(`  ${ratio(pure)}`);
const track = perCall('expd track (enqueue, variant from the cache)', (i) => { drained(i); client.track('purchase', { experiment_id: 'two-arms', user_id: USERS[i % 1000], value: 1 }); }, 200_000);
console.log(`  ${ratio(track)}`);
client.sender.queue.length = 0;
console.log(loadLine());
void sink;
await client.close(10);
