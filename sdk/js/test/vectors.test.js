// The shared bucketing vectors (testdata/bucketing/vectors.json), through
// node:crypto and through the pure-JS SHA-256 that fetch-only runtimes use.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { BucketMap, bucketOf } from '../src/index.js';
import { bucketOfDigest } from '../src/bucketing.js';
import { sha256Pure } from '../src/sha256.js';

const vectors = JSON.parse(readFileSync(new URL('../../../testdata/bucketing/vectors.json', import.meta.url), 'utf8'));

test('every bucket case, node:crypto', () => {
  assert.ok(vectors.bucket_cases.length > 1000);
  for (const c of vectors.bucket_cases) {
    assert.equal(bucketOf(c.experiment_id, c.salt, c.bucket_count, c.user_id), c.bucket, JSON.stringify(c));
  }
});

test('every bucket case, pure-JS SHA-256', () => {
  for (const c of vectors.bucket_cases) {
    const d = sha256Pure(`${c.experiment_id}.${c.salt}.${c.user_id}`);
    assert.equal(bucketOfDigest(d, c.bucket_count), c.bucket, JSON.stringify(c));
  }
});

test('every lookup case', () => {
  assert.ok(vectors.lookup_cases.length > 100);
  for (const c of vectors.lookup_cases) {
    assert.equal(new BucketMap(c.map).variantFor(c.bucket), c.variant, JSON.stringify(c));
  }
});

test('the CommonJS build gives the same buckets', () => {
  const cjs = createRequire(import.meta.url)('../dist/cjs/index.cjs');
  for (const c of vectors.bucket_cases.slice(0, 200)) {
    assert.equal(cjs.bucketOf(c.experiment_id, c.salt, c.bucket_count, c.user_id), c.bucket);
  }
});
