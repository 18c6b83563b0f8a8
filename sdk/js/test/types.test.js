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
