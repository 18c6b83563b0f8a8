import { ConfigError, ConfigSnapshot } from './config.js';
import { TransportError, backoffDelay, parseRetryAfter, problemOf } from './http.js';

// Keeps the org config fresh: a first fetch at start, then GET /v1/config
// every intervalMs with If-None-Match (304 keeps the cache). A newer
// config_version seen in an ingest ack triggers a fetch at once (at most one
// per second). Failures back off; the last good config stays.

const MIN_MS_BETWEEN_FORCED_FETCHES = 1000;

export class ConfigPoller {
  constructor(http, intervalMs, logger, expected) {
    this.http = http;
    this.intervalMs = intervalMs;
    this.logger = logger;
    this.expected = expected;
    this.snapshot = null;
    this.closed = false;
    this.failures = 0;
    this.timer = null;
    this.fetching = null;
    this.lastFetch = -Infinity;
    this.waiters = [];
    this.refused = false;
  }

  start() {
    if (!this.closed && this.timer === null && this.fetching === null) this.runOnce();
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = null;
    this.settleWaiters(false);
  }

  /**
   * Resolves true once a config is loaded; false after timeoutMs, when the
   * server refuses the key (401/403) or when the client closes. Its timer is
   * deliberately not unref'd: a caller awaiting readiness must see the promise
   * settle (an unref'd timer let Node exit with code 13 while the caller's
   * fallback never ran, when the server was down or the key revoked).
   */
  waitLoaded(timeoutMs) {
    if (this.snapshot !== null) return Promise.resolve(true);
    if (this.closed || this.refused) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      const waiter = (loaded) => {
        clearTimeout(timer);
        resolve(loaded);
      };
      this.waiters.push(waiter);
    });
  }

  settleWaiters(loaded) {
    for (const w of this.waiters.splice(0)) w(loaded);
  }

  /** Refresh soon if the server reports a config newer than ours. */
  noticeVersion(version) {
    if (this.closed || (this.snapshot !== null && version <= this.snapshot.version)) return;
    if (this.fetching !== null) return;
    clearTimeout(this.timer);
    const wait = Math.max(0, this.lastFetch + MIN_MS_BETWEEN_FORCED_FETCHES - Date.now());
    this.schedule(wait);
  }

  schedule(ms) {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.runOnce();
    }, ms);
    this.timer.unref?.();
  }

  runOnce() {
    this.lastFetch = Date.now();
    this.fetching = this.fetch()
      .catch((err) => {
        this.logger.error(`expd: unexpected error while fetching the config: ${err?.stack ?? err}`);
        return 0;
      })
      .then((retryAfter) => {
        this.fetching = null;
        if (retryAfter === null) {
          this.failures = 0;
          this.schedule(this.intervalMs);
        } else {
          this.schedule(backoffDelay(this.failures, 1, this.intervalMs / 1000, retryAfter || null) * 1000);
          this.failures++;
        }
      });
    return this.fetching;
  }

  /** One fetch: null on success, else seconds to wait (0: use backoff). */
  async fetch() {
    const current = this.snapshot;
    const headers = current?.etag ? { 'If-None-Match': current.etag } : {};
    let response;
    try {
      response = await this.http.request('GET', '/v1/config', undefined, headers);
    } catch (err) {
      if (!(err instanceof TransportError)) throw err;
      this.logger.warn(`expd: config fetch failed: ${err.message}`);
      return 0;
    }
    if (response.status === 304 && current !== null) return null;
    if (response.status !== 200) {
      this.logger.warn(`expd: config fetch failed: ${problemOf(response)}`);
      // A refused key stays refused until someone changes it: tell the
      // callers waiting for readiness now instead of at their timeout.
      this.refused = response.status === 401 || response.status === 403;
      if (this.refused && this.snapshot === null) this.settleWaiters(false);
      return parseRetryAfter(response.headers.get('Retry-After')) ?? 0;
    }
    let snapshot;
    try {
      snapshot = ConfigSnapshot.parse(response.body, response.headers.get('ETag'));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.logger.error(`expd: config from the server is malformed, keeping the last one: ${err.message}`);
      return 0;
    }
    this.install(snapshot, this.snapshot);
    return null;
  }

  install(snapshot, previous) {
    // A lagging replica may serve an older version; never move backwards.
    if (previous !== null && snapshot.version < previous.version) return;
    this.snapshot = snapshot;
    this.refused = false;
    this.settleWaiters(true);
    if (previous === null || previous.version !== snapshot.version) {
      this.logger.info(`expd: config version ${snapshot.version} loaded`);
      const missing = this.expected.filter((name) => snapshot.find(name) === null);
      if (missing.length) this.logger.warn(`expd: experiments not running in config ${snapshot.version}: ${missing.join(', ')}`);
    }
  }
}
