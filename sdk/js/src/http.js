import { VERSION } from './version.js';

/** The request got no HTTP answer (refused, reset, timed out). */
export class TransportError extends Error {}

/** Seconds from a Retry-After header (delta-seconds or HTTP date), or null. */
export function parseRetryAfter(value, nowMs = Date.now()) {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const when = Date.parse(value);
  return Number.isNaN(when) ? null : Math.max(0, (when - nowMs) / 1000);
}

/** JSON over fetch with the API key on every request. */
export class HttpClient {
  constructor(baseUrl, apiKey, timeoutMs, fetchImpl) {
    this.baseUrl = baseUrl;
    this.apiKey = apiKey;
    this.timeoutMs = timeoutMs;
    this.fetch = fetchImpl ?? ((...args) => globalThis.fetch(...args));
  }

  /** One request; resolves to {status, headers, body} for any status, rejects with TransportError. */
  async request(method, path, body, headers = {}) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    timer.unref?.();
    try {
      const answer = await this.fetch(this.baseUrl + path, {
        method,
        body,
        signal: controller.signal,
        headers: {
          'X-API-Key': this.apiKey,
          'User-Agent': `expd-js/${VERSION}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...headers,
        },
      });
      const text = await answer.text();
      let parsed = null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = null;
      }
      return { status: answer.status, headers: answer.headers, body: parsed };
    } catch (err) {
      throw new TransportError(`${method} ${path}: ${err?.message ?? err}`);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A one-line description of a problem+json answer, for log lines. */
export function problemOf(response) {
  const b = response.body;
  if (b && typeof b === 'object') return `${response.status} ${b.title ?? ''}: ${b.detail ?? ''}`.trim();
  return String(response.status);
}

/** Exponential backoff with full jitter; a Retry-After wins (capped). Seconds. */
export function backoffDelay(attempt, base, cap, retryAfter = null) {
  if (retryAfter !== null && retryAfter !== undefined) return Math.min(retryAfter, cap);
  const ceiling = Math.min(cap, base * 2 ** attempt);
  return ceiling / 2 + (Math.random() * ceiling) / 2;
}
