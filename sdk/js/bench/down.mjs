// The caller's latency while expd is down: three clients in this process on
// the same config, one whose server is up (a fake expd in a child process,
// so that it does not share this event loop), one whose server refuses
// connections, one whose server accepts and never answers. Their senders
// and pollers run with short intervals, so the down ones keep failing and
// retrying during the measurement. Each call (a warm assign, a track, a
// wrapped model call to an in-process fake provider) is timed alone; calls
// run in slices of 200 with the event loop turned between slices (so
// timers, fetches and their failures run as in an application), and the
// states take turns in rounds so that load changes hit them alike. p50 and
// p99 are reported against the up client and against baselines timed the
// same way: a bare SHA-256 of the same input (assign, track) and the same
// provider call unwrapped (model call). Run: node bench/down.mjs
import { fork } from 'node:child_process';
import { createServer } from 'node:net';
import { setImmediate as turn } from 'node:timers/promises';
import { sha256 } from '../src/sha256.js';
import { HASH_PREFIX, USERS, loadLine, scenario, warmClient } from './lib.mjs';

if (process.argv[2] === '--serve') {
  const { startFakeServer } = await import('../test/helpers.js');
  const server = await startFakeServer();
  server.state.config = scenario.configs[0];
  process.send(server.url);
} else {
  await main();
}

async function main() {
  const child = fork(new URL(import.meta.url), ['--serve']);
  const upUrl = await new Promise((resolve) => child.once('message', resolve));
  const refusedUrl = await new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(`http://127.0.0.1:${port}`));
    });
  });
  const held = [];
  const hanging = createServer((socket) => held.push(socket)); // never read, never answered
  await new Promise((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  const hangingUrl = `http://127.0.0.1:${hanging.address().port}`;

  const options = { pollIntervalMs: 1000, flushIntervalMs: 50, retryBackoffMs: 20, maxBackoffMs: 200, requestTimeoutMs: 2000 };
  const states = ['up', 'refused', 'hanging'];
  const clients = {
    up: warmClient(upUrl, options, { poll: true }),
    refused: warmClient(refusedUrl, options, { poll: true }),
    hanging: warmClient(hangingUrl, options, { poll: true }),
  };
  const provider = {
    chat: {
      completions: {
        create: async (body) => ({ model: body.model, choices: [{ message: { content: 'Hello' } }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }),
      },
    },
  };
  const wrapped = Object.fromEntries(states.map((s) => [s, clients[s].wrap(provider, 'two-arms')]));
  const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] };

  const samples = {};
  let sink = null;
  const timeEach = async (key, n, fn) => {
    const out = (samples[key] ??= []);
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      fn(i);
      out.push(Number(process.hrtime.bigint() - t0));
      if (i % 200 === 199) await turn();
    }
  };
  const timeEachAsync = async (key, n, fn) => {
    const out = (samples[key] ??= []);
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      await fn(i);
      out.push(Number(process.hrtime.bigint() - t0));
    }
  };
  const rounds = 5;
  const fastN = 20_000;
  const callN = 2_000;
  for (let r = 0; r < rounds; r++) {
    await timeEach('baseline SHA-256', fastN, (i) => { sink = sha256(HASH_PREFIX + USERS[i % 1000]); });
    await timeEachAsync('baseline provider call', callN, () => provider.chat.completions.create(body));
    for (const s of states) {
      const c = clients[s];
      await timeEach(`${s} assign`, fastN, (i) => { sink = c.assign('two-arms', USERS[i % 1000]); });
      await timeEach(`${s} track`, fastN, (i) => { c.track('purchase', { experiment_id: 'two-arms', user_id: USERS[i % 1000], value: 1 }); });
      await timeEachAsync(`${s} model call`, callN, (i) => c.asUser(USERS[i % 1000], () => wrapped[s].chat.completions.create(body)));
    }
  }
  const q = (key, p) => {
    const s = samples[key].sort((a, b) => a - b);
    return s[Math.floor(p * (s.length - 1))];
  };
  const us = (ns) => `${(ns / 1000).toFixed(3)}µs`.padStart(12);
  const x = (v) => v.toFixed(2).padStart(10);
  console.log(loadLine());
  const hash = q('baseline SHA-256', 0.5);
  const call = q('baseline provider call', 0.5);
  console.log(`baselines (p50): SHA-256 ${us(hash)}, provider call unwrapped ${us(call)}`);
  console.log(`${'state call'.padEnd(20)}${'p50'.padStart(12)}${'p99'.padStart(12)}${'p50/base'.padStart(10)}${'p99/base'.padStart(10)}${'p50/up'.padStart(10)}${'p99/up'.padStart(10)}`);
  for (const what of ['assign', 'track', 'model call']) {
    const base = what === 'model call' ? call : hash;
    for (const s of states) {
      const k = `${s} ${what}`;
      const u = `up ${what}`;
      console.log(`${k.padEnd(20)}${us(q(k, 0.5))}${us(q(k, 0.99))}${x(q(k, 0.5) / base)}${x(q(k, 0.99) / base)}${x(q(k, 0.5) / q(u, 0.5))}${x(q(k, 0.99) / q(u, 0.99))}`);
    }
  }
  for (const s of states) console.log(`${s} client: ${clients[s].droppedEvents} events dropped (queue bound 10,000)`);
  void sink;
  await Promise.all(states.map((s) => clients[s].close(10)));
  for (const socket of held) socket.destroy();
  hanging.close();
  child.kill();
}
