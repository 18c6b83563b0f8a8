// Runs the client's ESM sources in a fresh V8 context holding only what a
// fetch-based runtime (edge functions, workers) offers: fetch, Web Crypto,
// TextEncoder, URL, timers, console. No process, Buffer, require or node:*
// module (every node: import fails), so the pure-JS SHA-256, the
// Buffer-less base64 and the synchronous asUser fallback are what runs.
// Started by test/edge.test.js with --experimental-vm-modules; argv: the
// fake server's URL. Prints one JSON line of results.
import vm from 'node:vm';
import { readFileSync } from 'node:fs';

const srcDir = new URL('../src/', import.meta.url);
const scenario = JSON.parse(readFileSync(new URL('../../../testdata/conformance/scenario.json', import.meta.url), 'utf8'));
const context = vm.createContext({
  fetch, Headers, Request, Response, AbortController, AbortSignal, TextEncoder, TextDecoder, URL, URLSearchParams,
  crypto: globalThis.crypto ?? (await import('node:crypto')).webcrypto, // Node 18 has no global Web Crypto
  atob, btoa, console, structuredClone, queueMicrotask,
  setTimeout, clearTimeout, setInterval, clearInterval,
});

const modules = new Map();
function load(file) {
  if (!modules.has(file)) {
    modules.set(file, new vm.SourceTextModule(readFileSync(new URL(file, srcDir), 'utf8'), { context, identifier: `expd/${file}` }));
  }
  return modules.get(file);
}
const root = load('index.js');
await root.link(async (specifier) => {
  if (specifier.startsWith('./')) return load(specifier.slice(2));
  throw new Error(`this runtime has no ${specifier}`);
});
await root.evaluate();
const { Client } = root.namespace;
const platform = modules.get('platform.js').namespace;

const out = {
  globals: vm.runInContext('[typeof process, typeof Buffer, typeof require, typeof AsyncLocalStorage].join()', context),
  nodeBuiltins: [platform.nodeCrypto, platform.nodeAsyncHooks, platform.nodeFs].filter((m) => m !== null).length,
};
const client = new Client({ apiKey: 'pk_test', baseUrl: process.argv[2], flushIntervalMs: 50, logger: { debug() {}, info() {}, warn() {}, error() {} } });
out.ready = await client.waitUntilReady(10_000);
const expected = scenario.expected['two-arms'];
out.mismatches = 0;
for (let i = 0; i < 3000; i++) {
  const want = expected.variants[Number(expected.by_config[0][i])];
  if (client.assign('two-arms', `${scenario.user_prefix}${i}`) !== want) out.mismatches++;
}
out.sample = client.assign('two-arms', `${scenario.user_prefix}0`);
out.tracked = client.track('purchase', { experiment_id: 'two-arms', user_id: `${scenario.user_prefix}7`, value: 9.5 });
out.boundUser = await client.asUser('u-edge', async () => 'ran');
out.flushed = await client.flush(10_000);
await client.close(1000);
console.log(JSON.stringify(out));
process.exit(0);
