// A fake expd for the client tests: GET /v1/config with ETags, POST /v1/events
// and POST /v1/scores storing what they receive, and switches for failure modes.
import { createServer } from 'node:http';

export async function startFakeServer(apiKey = 'pk_test') {
  const state = {
    config: { config_version: 1, experiments: [] },
    ackVersion: null,
    down: false, // answer 503 with Retry-After: 0
    failNext: [], // statuses (with optional retryAfter) for the next event posts
    hang: false,
    events: [],
    scoreBodies: [], // every POST /v1/scores body, as it arrived
    failScores: [], // statuses for the next score posts
    requests: [],
    configFetches: 0,
    notModified: 0,
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      state.requests.push({ method: req.method, url: req.url, headers: req.headers, at: Date.now() });
      if (state.hang) return; // never answer
      const json = (status, value, headers = {}) => {
        res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
        res.end(value === undefined ? '' : JSON.stringify(value));
      };
      if (req.headers['x-api-key'] !== apiKey) return json(401, { title: 'Unauthorized' });
      if (state.down) return json(503, { title: 'Service Unavailable' }, { 'Retry-After': '0' });
      if (req.method === 'GET' && req.url === '/v1/config') {
        state.configFetches++;
        const etag = `"${state.config.config_version}"`;
        if (req.headers['if-none-match'] === etag) {
          state.notModified++;
          res.writeHead(304, { ETag: etag });
          return res.end();
        }
        return json(200, state.config, { ETag: etag });
      }
      if (req.method === 'POST' && req.url === '/v1/events') {
        const fail = state.failNext.shift();
        if (fail) return json(fail.status, { title: 'failure' }, fail.retryAfter === undefined ? {} : { 'Retry-After': String(fail.retryAfter) });
        const events = JSON.parse(body).events;
        state.events.push(...events);
        return json(202, { accepted: events.length, rejected: [], config_version: state.ackVersion ?? state.config.config_version });
      }
      if (req.method === 'POST' && req.url === '/v1/scores') {
        const fail = state.failScores.shift();
        if (fail) return json(fail, { title: 'failure' }, { 'Retry-After': '0' });
        const parsed = JSON.parse(body);
        state.scoreBodies.push(parsed);
        return json(202, { accepted: parsed.scores.length, rejected: [], config_version: state.config.config_version });
      }
      json(404, { title: 'Not Found' });
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    state,
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(resolve);
    }),
    eventsOf: (type) => state.events.filter((e) => e.type === type),
    scores: () => state.scoreBodies.flatMap((b) => b.scores),
  };
}

export async function eventually(check, timeoutMs = 10_000, what = 'condition') {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const silent = { debug() {}, info() {}, warn() {}, error() {} };
