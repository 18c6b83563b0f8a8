// docs/quickstart.md and run.sh cannot drift apart: every command of the
// doc's sh blocks is a line of the script, in the doc's order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const here = new URL('..', import.meta.url);
const doc = readFileSync(new URL('../../docs/quickstart.md', here), 'utf8');
const script = readFileSync(new URL('run.sh', here), 'utf8').split('\n');

function docCommands() {
  const out = [];
  for (const [, block] of doc.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of block.split('\n')) {
      if (line.trim() && !line.trim().startsWith('#')) out.push(line);
    }
  }
  return out;
}

test('every command of docs/quickstart.md is in run.sh, in order', () => {
  const commands = docCommands();
  assert.ok(commands.length >= 10, `the doc has only ${commands.length} commands`);
  let at = 0;
  for (const cmd of commands) {
    const found = script.indexOf(cmd, at);
    assert.notEqual(found, -1, `run.sh lacks (after line ${at + 1}) the doc's command:\n${cmd}`);
    at = found + 1;
  }
});
