// The committed CommonJS build is what scripts/build-cjs.mjs makes of src/ now.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { build, outDir } from '../scripts/build-cjs.mjs';

test('dist/cjs is fresh (run npm run build after editing src/)', () => {
  const want = build();
  assert.deepEqual(readdirSync(outDir).sort(), Object.keys(want).sort());
  for (const [name, content] of Object.entries(want)) {
    assert.equal(readFileSync(join(outDir, name), 'utf8'), content, `dist/cjs/${name} is stale`);
  }
});
