// The quick start's app (docs/quickstart.md): a support bot whose prompt
// and model come from the experiment, calling the model through the
// official openai client wrapped by expd, and simulated users who ask a
// question, read the answer, and sometimes rate it or buy.
//
// It reads the dev credentials of `expd dev` (EXPD_DEV_DATA_DIR, default
// .expd) and lets the openai client read OPENAI_BASE_URL and
// OPENAI_API_KEY. QUICKSTART_USERS users (default 1600) visit, 24 at a time.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import { Client } from 'expd';

const EXPERIMENT = 'quickstart';
const USERS = Number(process.env.QUICKSTART_USERS ?? 1600);
const AT_ONCE = 24;

const creds = JSON.parse(readFileSync(join(process.env.EXPD_DEV_DATA_DIR ?? '.expd', 'dev-credentials.json'), 'utf8'));
const expd = new Client({ apiKey: creds.publishable_key, baseUrl: creds.base_url, experiments: [EXPERIMENT] });
// No retries: a model error is an error the experiment should see.
const openai = expd.wrap(new OpenAI({ maxRetries: 0 }), EXPERIMENT);

if (!(await expd.waitUntilReady(10_000))) {
  console.error(`expd's config did not load from ${creds.base_url}`);
  process.exit(1);
}

const QUESTIONS = [
  (n) => `Where is my order #${n}?`,
  (n) => `How do I reset the password of account ${n}?`,
  (n) => `Can I get a refund for invoice ${n}?`,
  (n) => `Why was card ending ${n % 10000} charged twice?`,
];

// chance is a number in [0, 1) fixed by the user and what for: the
// simulation gives the same outcome on every run.
function chance(user, what) {
  return createHash('sha256').update(`${user}/${what}`).digest().readUInt32BE(0) / 2 ** 32;
}

// What the users did, per arm, printed at the end.
const tally = {};

async function visit(i) {
  const user = `user-${i}`;
  const { variant, prompt } = expd.getPrompt(EXPERIMENT, user, 'You are a helpful support agent.');
  const arm = (tally[variant] ??= { visits: 0, errors: 0, ratings: 0, purchases: 0 });
  const { model } = expd.getVariables(EXPERIMENT, user, { model: 'fake-mini' });
  const question = QUESTIONS[i % QUESTIONS.length](10_000 + i);
  await expd.asUser(user, async () => {
    arm.visits++;
    // Every other user gets the answer streamed (server-sent events); the
    // wrapped client records a stream when it ends, with time to first token.
    const streamed = i % 2 === 1;
    let answer = '';
    try {
      const res = await openai.chat.completions.create({
        model,
        messages: [{ role: 'system', content: prompt }, { role: 'user', content: question }],
        ...(streamed ? { stream: true, stream_options: { include_usage: true } } : {}),
      });
      if (streamed) {
        for await (const chunk of res) answer += chunk.choices[0]?.delta?.content ?? '';
      } else {
        answer = res.choices[0].message.content;
      }
    } catch (err) {
      if (err?.status !== 500) throw err; // only the fake model's own errors are expected
      arm.errors++; // the wrapped client recorded the failed call; this user leaves
      return;
    }
    // The simulated user's patience: the shorter the answer, the likelier
    // a purchase (20 words: 0.6, 40: 0.3, 80: 0.02) and a thumbs-up (1.5
    // times as likely).
    const words = answer.split(/\s+/).length;
    const patience = Math.max(0.02, 0.9 - 0.015 * words);
    if (chance(user, 'rates') < 0.6 && expd.score(expd.lastCallId(), 'thumbs_up', chance(user, 'likes') < 1.5 * patience)) {
      arm.ratings++;
    }
    if (chance(user, 'buys') < patience) {
      expd.trackBusiness(EXPERIMENT, user, 'conversion');
      arm.purchases++;
    }
  });
}

let next = 0;
await Promise.all(Array.from({ length: AT_ONCE }, async () => {
  while (next < USERS) await visit(next++);
}));
const sent = await expd.flush(30_000);
await expd.close();
console.log(JSON.stringify({ arms: tally, dropped: expd.droppedEvents, sent }));
if (!sent || expd.droppedEvents > 0) process.exit(1);
