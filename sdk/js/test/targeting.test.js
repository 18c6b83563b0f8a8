// The shared targeting vectors (testdata/targeting/vectors.json), as the
// server's targeting package runs them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ConditionError, compileCondition, compileRegex } from '../src/targeting.js';

const vectors = JSON.parse(readFileSync(new URL('../../../testdata/targeting/vectors.json', import.meta.url), 'utf8'));

test('every targeting case', () => {
  assert.ok(vectors.cases.length > 100);
  for (const c of vectors.cases) {
    assert.equal(compileCondition(c.condition)(c.attributes), c.match, c.name);
  }
});

test('every invalid condition is refused', () => {
  for (const c of vectors.invalid) {
    assert.throws(() => compileCondition(c.condition), ConditionError, c.name);
  }
});

test('every regex case', () => {
  for (const c of vectors.regex) {
    if (!c.valid) {
      assert.throws(() => compileRegex(c.pattern), Error, c.pattern);
      continue;
    }
    const re = compileRegex(c.pattern);
    for (const [text, want] of Object.entries(c.matches)) {
      assert.equal(re.test(text), want, `${c.pattern} on ${JSON.stringify(text)}`);
    }
  }
});
