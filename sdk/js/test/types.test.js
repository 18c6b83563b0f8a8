// index.d.ts declares exactly what the package exports, and every Client method.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as expd from '../src/index.js';

const dts = readFileSync(new URL('../index.d.ts', import.meta.url), 'utf8');

test('every export is declared and every declaration exported', () => {
  const declared = [...dts.matchAll(/^export declare (?:class|function|const) (\w+)/gm)].map((m) => m[1]).sort();
  assert.deepEqual(declared, Object.keys(expd).sort());
});

test('every public Client method is declared', () => {
  const methods = Object.getOwnPropertyNames(expd.Client.prototype)
    .filter((n) => n !== 'constructor' && !n.startsWith('_') && !['expose', 'experimentOf'].includes(n));
  const body = dts.slice(dts.indexOf('export declare class Client'));
  for (const m of methods) assert.match(body, new RegExp(`\\b${m}\\b`), `Client.${m} is not declared`);
});

// The members declared in `export declare class <name> { ... }` or `export interface <name> { ... }`.
function declaredMembers(kind, name) {
  const start = dts.indexOf(`export ${kind} ${name} `);
  assert.ok(start >= 0, `${name} is not declared`);
  const body = dts.slice(dts.indexOf('{', start) + 1, dts.indexOf('\n}', start));
  return [...body.matchAll(/^ {2}(?:readonly |static )?(\w+)\??[(<:]/gm)].map((m) => m[1]).filter((n) => n !== 'constructor');
}

const offline = { apiKey: 'pk_types', baseUrl: 'http://127.0.0.1:9', pollIntervalMs: 3_600_000, logger: { debug() {}, info() {}, warn() {}, error() {} } };

test('ClientOptions declares exactly the options the constructor reads', () => {
  const src = readFileSync(new URL('../src/client.js', import.meta.url), 'utf8');
  const read = [...new Set([...src.matchAll(/\boptions\.(\w+)/g)].map((m) => m[1]))].sort();
  assert.deepEqual(declaredMembers('interface', 'ClientOptions').sort(), read);
});

test('every declared Client and ModelCall member exists at runtime', async () => {
  const client = new expd.Client(offline);
  try {
    for (const m of declaredMembers('declare class', 'Client')) assert.ok(m in client, `Client.${m} is declared but missing`);
    const call = client.startModelCall('nope', 'u1');
    for (const m of declaredMembers('declare class', 'ModelCall')) assert.ok(m in call, `ModelCall.${m} is declared but missing`);
    // Shapes the declarations promise, before any config loads.
    assert.equal(client.assign('nope', 'u1'), null);
    assert.deepEqual(Object.keys(client.getPrompt('nope', 'u1', 'd')).sort(), declaredMembers('interface', 'PromptAnswer').sort());
    assert.equal(client.configVersion, null);
    assert.equal(typeof client.droppedEvents, 'number');
    assert.equal(typeof client.track('purchase', { user_id: 'u1' }), 'boolean');
    assert.ok(client.waitUntilReady(1) instanceof Promise);
  } finally {
    await client.close(1);
  }
});
