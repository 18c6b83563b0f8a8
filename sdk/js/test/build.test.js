// The committed CommonJS build is what scripts/build-cjs.mjs makes of src/ now.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { build, outDir, versionFile, versionSource } from '../scripts/build-cjs.mjs';

test('src/version.js carries package.json\'s version (npm run build after a version change)', () => {
  assert.equal(readFileSync(versionFile, 'utf8'), versionSource());
});

test('dist/cjs is fresh (run npm run build after editing src/)', () => {
  const want = build();
  assert.deepEqual(readdirSync(outDir).sort(), Object.keys(want).sort());
  for (const [name, content] of Object.entries(want)) {
    assert.equal(readFileSync(join(outDir, name), 'utf8'), content, `dist/cjs/${name} is stale`);
  }
});
