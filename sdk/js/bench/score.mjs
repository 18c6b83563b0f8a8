// The caller's latency of score() beside track(): both only enqueue (score
// also validates its fields). Single calls timed alone, taking turns (lib's
// sideBySide), p50 and p99; the queue is emptied every 10,000 calls as the
// sender would, so retained records do not turn this into a GC measurement.
// Run: node bench/score.mjs
import { USERS, sideBySide, warmClient } from './lib.mjs';

const client = warmClient('http://127.0.0.1:9', { maxQueueSize: 10_000_000, flushIntervalMs: 3_600_000 });
const drained = (i) => { if (i % 10_000 === 0) client.sender.queue.length = 0; };
const payloads = USERS.map((u) => ({ experiment_id: 'two-arms', user_id: u, value: 1 }));
const callIds = USERS.map((_, i) => `5f0c${String(i).padStart(4, '0')}-7a1b-4c2d-8e3f-0a1b2c3d4e5f`);
sideBySide([
  ['track (business event, variant from the cache)', (i) => { drained(i); client.track('conversion', payloads[i % 1000]); }],
  ['score (thumbs_up, human)', (i) => { drained(i); client.score(callIds[i % 1000], 'thumbs_up', true); }],
  ['score (rating with comment and timestamp)', (i) => { drained(i); client.score(callIds[i % 1000], 'rating', 4, { comment: 'clear and short', timestamp: new Date() }); }],
]);
await client.close(1);
