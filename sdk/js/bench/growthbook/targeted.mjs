// expd's assign with a five-condition targeting rule and a layer, next to
// the same call on the experiment without them and to GrowthBook's JS SDK
// evaluating the same condition and namespace (testdata/targeting/bench.json;
// docs/targeting.md, "Benchmark"), warm: config/features loaded, each of
// 1,000 users assigned once. Every SDK is checked to let every user in and
// split them about 50/50 before timing. Run: npm install && node targeted.mjs
import { readFileSync } from 'node:fs';
import { GrowthBookClient } from '@growthbook/growthbook';
import { Client } from '../../src/index.js';
import { ConfigSnapshot } from '../../src/config.js';
import { sha256 } from '../../src/sha256.js';
import { HASH_PREFIX, USERS, sideBySide, silent } from '../lib.mjs';

const bench = JSON.parse(readFileSync(new URL('../../../../testdata/targeting/bench.json', import.meta.url), 'utf8'));
const attrs = bench.attributes;
const expd = new Client({ apiKey: 'pk_test', baseUrl: 'http://127.0.0.1:9', logger: silent, flushIntervalMs: 3_600_000, maxQueueSize: 10_000_000 });
expd.poller.close();
expd.poller.install(ConfigSnapshot.parse(bench.config, '"1"'), null);

const rule = { key: 'targeted', variations: ['control', 'treatment'], weights: [0.5, 0.5], hashAttribute: 'id',
  condition: bench.growthbook.condition, namespace: bench.growthbook.namespace };
const gb = new GrowthBookClient().initSync({ payload: { features: { checkout: { defaultValue: 'control', rules: [rule] } } } });
const contexts = USERS.map((id) => ({ attributes: { id, ...attrs } }));

const controls = { plain: 0, targeted: 0, run: 0, feature: 0 };
USERS.forEach((u, i) => {
  const d = expd.assignDetail('targeted', u, attrs);
  if (!d.inExperiment) throw new Error(`expd: ${u} not in the experiment: ${JSON.stringify(d)}`);
  if (expd.assignDetail('targeted', u, { plan: 'free' }).reasonCode !== 'not_targeted') throw new Error(`expd: ${u} targeted without matching`);
  const run = gb.runInlineExperiment(rule, contexts[i]);
  const feature = gb.evalFeature('checkout', contexts[i]);
  if (!run.inExperiment || feature.source !== 'experiment') throw new Error(`GrowthBook: ${u} not in the experiment`);
  controls.plain += expd.assign('plain', u, attrs) === 'control';
  controls.targeted += d.variant === 'control';
  controls.run += run.value === 'control';
  controls.feature += feature.value === 'control';
});
for (const [name, n] of Object.entries(controls)) {
  if (n < 430 || n > 570) throw new Error(`${name}: ${n} of 1,000 users in control`);
}
for (const u of USERS) expd.assign('targeted', u, attrs); // warm, with matching attributes

let sink = null;
sideBySide([
  ['expd assign, no targeting', (i) => { sink = expd.assign('plain', USERS[i % 1000], attrs); }],
  ['expd assign, 5 conditions + layer', (i) => { sink = expd.assign('targeted', USERS[i % 1000], attrs); }],
  ['GrowthBookClient runInlineExperiment, same', (i) => { sink = gb.runInlineExperiment(rule, contexts[i % 1000]).value; }],
  ['GrowthBookClient evalFeature, same', (i) => { sink = gb.evalFeature('checkout', contexts[i % 1000]).value; }],
  ['baseline: SHA-256 of the same input', (i) => { sink = sha256(HASH_PREFIX + USERS[i % 1000]); }],
]);
void sink;
gb.destroy();
await expd.close(10);
