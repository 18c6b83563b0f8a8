// Shared by the benches: the conformance scenario, a client with its config
// installed and no network on the measured path, timing helpers.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Client } from '../src/index.js';
import { ConfigSnapshot } from '../src/config.js';

export const scenario = JSON.parse(readFileSync(new URL('../../../testdata/conformance/scenario.json', import.meta.url), 'utf8'));
export const USERS = Array.from({ length: 1000 }, (_, i) => `user-${i}`);
const first = scenario.configs[0].experiments[0];
/** What bucketing hashes for two-arms: `${id}.${salt}.` + user id. */
export const HASH_PREFIX = `${first.id}.${first.salt}.`;
export const silent = { debug() {}, info() {}, warn() {}, error() {} };

export function loadLine() {
  return `load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`;
}

/** scenario.configs[i] parsed as the poller would. */
export function snapshotOf(i) {
  return ConfigSnapshot.parse(scenario.configs[i], `"${i + 1}"`);
}

/**
 * A client on baseUrl with scenario.configs[0] installed, as if loaded
 * before the measurement; every user of USERS assigned once (warm).
 * With poll false its poller is stopped (no network at all).
 */
export function warmClient(baseUrl, options = {}, { poll = false } = {}) {
  const client = new Client({ apiKey: 'pk_test', baseUrl, logger: silent, ...options });
  if (!poll) client.poller.close();
  client.poller.install(snapshotOf(0), null);
  for (const u of USERS) client.assign('two-arms', u);
  return client;
}

/**
 * Median over 5 runs of the mean time per call of fn(i), i = 0..n-1, after
 * a warm-up (JIT); prints a line and returns nanoseconds per call.
 */
export function perCall(label, fn, n = Number(process.env.BENCH_N ?? 300_000)) {
  for (let i = 0; i < n / 10; i++) fn(i);
  const runs = [];
  for (let r = 0; r < 5; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn(i);
    runs.push(Number(process.hrtime.bigint() - t0) / n);
  }
  runs.sort((a, b) => a - b);
  console.log(`${label.padEnd(52)} median ${(runs[2] / 1000).toFixed(3)} µs/call (best ${(runs[0] / 1000).toFixed(3)}, worst ${(runs[4] / 1000).toFixed(3)})`);
  return runs[2];
}

/**
 * Times each call alone, the calls taking turns in rounds (so that load
 * changes hit them alike), and prints p50 and p99 per call with the ratio
 * of each p50 to the first call's (the baseline) and to the second's. On a
 * shared machine a preempted loop makes a mean meaningless; a p50 of single
 * calls holds. calls: [[label, fn(i)], ...].
 */
export function sideBySide(calls, { rounds = 10, n = 5_000 } = {}) {
  const samples = calls.map(() => []);
  for (let r = 0; r < rounds; r++) {
    calls.forEach(([, fn], k) => {
      const out = samples[k];
      for (let i = 0; i < n; i++) {
        const t0 = process.hrtime.bigint();
        fn(i);
        out.push(Number(process.hrtime.bigint() - t0));
      }
    });
  }
  const q = (k, p) => {
    const s = samples[k].sort((a, b) => a - b);
    return s[Math.floor(p * (s.length - 1))];
  };
  const us = (ns) => `${(ns / 1000).toFixed(3)}µs`.padStart(11);
  console.log(loadLine());
  console.log(`${'call'.padEnd(46)}${'p50'.padStart(11)}${'p99'.padStart(11)}${'p50/base'.padStart(10)}${`p50/#2`.padStart(10)}`);
  calls.forEach(([label], k) => {
    console.log(`${label.padEnd(46)}${us(q(k, 0.5))}${us(q(k, 0.99))}${(q(k, 0.5) / q(0, 0.5)).toFixed(2).padStart(10)}${(q(k, 0.5) / q(1, 0.5)).toFixed(2).padStart(10)}`);
  });
}
