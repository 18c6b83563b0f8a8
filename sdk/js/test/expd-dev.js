// Builds expd from this checkout (once per test file) and runs `expd dev` on
// free ports in a temporary data dir: SQLite, embedded Temporal, no rate limits.
import { spawn, spawnSync } from 'node:child_process';
import { after, before } from 'node:test';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const DEV_ENV = { DATABASE_URL: '', TEMPORAL_ADDRESS: '', EXPD_LOG_LEVEL: 'warn', EXPD_RATE_LIMITS: '*=off' };

/** null when Go is missing (the caller skips), else the binary's path. */
export function buildExpd() {
  if (spawnSync('go', ['version']).status !== 0) return null;
  const out = join(mkdtempSync(join(tmpdir(), 'expd-bin-')), 'expd');
  const build = spawnSync('go', ['build', '-o', out, './cmd/expd'], { cwd: repoRoot, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`go build ./cmd/expd failed:\n${build.stdout}${build.stderr}`);
  return out;
}

/**
 * One `expd dev` for the calling test file: built now, started before the
 * file's tests and stopped after them. `live.dev` is the server once started;
 * `live.skip` is the test option that skips where Go is missing.
 */
export function liveDev() {
  const binary = buildExpd();
  const live = { dev: null, skip: binary === null && 'go not on PATH' };
  before(async () => {
    if (binary !== null) live.dev = await startExpdDev(binary);
  });
  after(async () => {
    await live.dev?.stop();
  });
  return live;
}

// How often startExpdDev runs `expd dev` again when it exits before printing
// its API address. The dev server retries a port lost to another process
// itself; this covers what it cannot, so one unlucky start fails no test.
export const START_ATTEMPTS = 3;

/** Runs `expd dev` (binary) in a fresh data dir, again when a start exits before its banner. */
export async function startExpdDev(binary) {
  const dataDir = mkdtempSync(join(tmpdir(), 'expd-dev-'));
  for (let attempt = 1; ; attempt++) {
    try {
      const started = await startOnce(binary, dataDir);
      return devServer(started, dataDir);
    } catch (err) {
      if (!err.exitedEarly || attempt === START_ATTEMPTS) throw new Error(`${err.message} (start ${attempt} of ${START_ATTEMPTS})`);
    }
  }
}

/**
 * Spawns `expd dev` and resolves with the child and its banner's API URL;
 * rejects, with exitedEarly set and its stderr's tail, when it exits first.
 */
function startOnce(binary, dataDir) {
  const child = spawn(binary, ['dev', '--addr', '127.0.0.1:0', '--data-dir', dataDir, '--temporal-port', '0',
    // --plan enterprise: the tests' load would hit the free plan's limits.
    '--temporal-http-port', '0', '--ui-port', '-1', '--plan', 'enterprise'], { env: { ...process.env, ...DEV_ENV }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr = (stderr + chunk).slice(-4000); });
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`expd dev did not start within 180 s; stderr ends:\n${stderr}`));
    }, 180_000);
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      const m = buffered.match(/^\s*API:\s*(\S+)/m);
      if (m) {
        clearTimeout(timer);
        child.stdout.resume();
        resolve({ child, baseUrl: m[1] });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`expd dev exited with ${code} before printing its API address; stderr ends:\n${stderr}`), { exitedEarly: true }));
    });
  });
}

function devServer({ child, baseUrl }, dataDir) {
  const credentials = JSON.parse(readFileSync(join(dataDir, 'dev-credentials.json'), 'utf8'));
  const api = async (method, path, body, auth) => {
    const res = await fetch(baseUrl + path, {
      method,
      headers: { 'Content-Type': 'application/json', ...auth },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const jwt = { Authorization: `Bearer ${credentials.identity_jwt}` };
  const key = { 'X-API-Key': credentials.publishable_key };
  return {
    baseUrl,
    apiKey: credentials.publishable_key,
    async createExperiment(config) {
      const r = await api('POST', '/v1/experiments', config, jwt);
      if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async updateExperiment(ref, config) {
      const r = await api('PUT', `/v1/experiments/${encodeURIComponent(ref)}`, config, jwt);
      if (r.status !== 200) throw new Error(`update: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async assign(ref, userId) {
      const r = await api('POST', '/v1/assign', { experiment_id: ref, user_id: userId }, key);
      if (r.status !== 200) throw new Error(`assign: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async events(ref, query = {}) {
      const qs = new URLSearchParams({ limit: '1000', ...query });
      const r = await api('GET', `/v1/experiments/${encodeURIComponent(ref)}/events?${qs}`, undefined, jwt);
      if (r.status !== 200) throw new Error(`events: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.events;
    },
    stop() {
      return new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', resolve);
        child.kill('SIGINT');
        setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
      });
    },
  };
}

export function experimentConfig(name, weights, { prompts = {}, bucketCount = 10_000 } = {}) {
  return {
    name,
    salt: 'js-live-tests',
    bucket_count: bucketCount,
    allocation: weights.map(([variant, weight]) => ({ variant, weight })),
    variants: Object.fromEntries(weights.map(([v]) => [v, { ...(prompts[v] ? { prompt: prompts[v] } : {}), variables: { arm: v } }])),
    metrics: [],
  };
}

/** Runs fn over items with at most `width` in flight. */
export async function inParallel(items, width, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  }));
  return out;
}
