// Checks the quick start's verdict (run.sh's last step) against what the
// fake models' deterministic behaviour implies, and exits 1 with the
// reasons when it does not:
//
// - minutes of data are a window under 7 days, so every row is
//   preliminary and the recommendation is keep_running for "preliminary";
// - concise (fake-mini, 20-word answers) converts better than control
//   (fake-mini, 40 words): the simulated users' patience is 0.6 against 0.3,
//   and rates up more often;
// - pro (fake-pro, 80 words, patience 0.02) converts worse, and its calls
//   are slower (60 ms + 1 ms a token against 20 ms + 0.5 ms);
// - concise-pro (fake-pro, 40 words) converts like control: not checked,
//   since who lands in which arm changes from run to run (the bucket hashes
//   the experiment's id, new at each creation), so a spurious difference is
//   possible there; the effects checked are several times their intervals.
import { readFileSync } from 'node:fs';

const res = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const v = res.verdict;
const problems = [];
const expect = (ok, what) => { if (!ok) problems.push(what); };

const row = (metric, variant) => res.metrics.find((r) => r.metric === metric && r.variant === variant);
const outcome = (metric, variant) => row(metric, variant)?.judgement?.outcome;
const arm = (variant) => v?.arms?.find((a) => a.variant === variant);
const primary = (variant, metric) => arm(variant)?.primary?.find((p) => p.metric === metric)?.outcome;

expect(v, 'the results carry a verdict');
expect(v?.recommendation === 'keep_running', `recommendation ${v?.recommendation}, want keep_running`);
expect(v?.reasons?.some((r) => r.code === 'preliminary'), 'a reason "preliminary" (a window of minutes)');
expect(res.srm?.gate === 'pass', `SRM gate ${res.srm?.gate}, want pass`);
expect(primary('concise', 'conversion') === 'better', `concise conversion ${primary('concise', 'conversion')}, want better`);
expect(primary('pro', 'conversion') === 'worse', `pro conversion ${primary('pro', 'conversion')}, want worse`);
expect(outcome('latency_ms', 'pro') === 'worse', `pro latency_ms ${outcome('latency_ms', 'pro')}, want worse`);
expect(outcome('thumbs_up_rate', 'concise') === 'better', `concise thumbs_up_rate ${outcome('thumbs_up_rate', 'concise')}, want better`);
for (const a of v?.arms ?? []) {
  expect(a.data_health === 'preliminary', `arm ${a.variant} data health ${a.data_health}, want preliminary`);
}

if (problems.length) {
  console.error('The quick start\'s verdict is not the expected one:\n  ' + problems.join('\n  '));
  console.error(JSON.stringify(v, null, 2));
  process.exit(1);
}
console.log(`verdict as expected: ${v.recommendation} (${[...new Set(v.reasons.map((r) => r.code))].join(', ')}); concise leads on conversion`);
