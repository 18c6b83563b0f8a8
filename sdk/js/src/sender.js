import { TransportError, backoffDelay, parseRetryAfter, problemOf } from './http.js';
import { SCORE } from './scores.js';

// The background event sender: a bounded queue drained by timers. enqueue()
// is the only call on the caller's path (a length check and a push); the
// drain runs on the event loop later, posts batches to POST /v1/events,
// retries failures with backoff honouring Retry-After, and finally spills a
// batch to the offline file or drops it with a log line. Scores share the
// queue, the batching, the retries and the spill file; records of type
// `score` are posted to POST /v1/scores (without the type) instead.

export const MAX_BATCH_EVENTS = 1000;
export const MAX_BATCH_BYTES = 1024 * 1024;
const RETRYABLE = new Set([408, 425, 429, 500, 502, 503, 504]);
const DROP_LOG_EVERY_MS = 10_000;
const encoder = new TextEncoder();

function withoutType(record) {
  const { type, ...wire } = record;
  return wire;
}

/** Where records of one kind go, and how one goes on the wire (wire null: as queued). */
export const EVENTS = { path: '/v1/events', noun: 'events', key: 'events', wire: null };
export const SCORES = { path: '/v1/scores', noun: 'scores', key: 'scores', wire: withoutType };

export class EventSender {
  constructor(http, opts) {
    if (!(opts.batchSize >= 1 && opts.batchSize <= MAX_BATCH_EVENTS)) {
      throw new RangeError(`batchSize must be within 1..${MAX_BATCH_EVENTS}, got ${opts.batchSize}`);
    }
    this.http = http;
    this.opts = opts; // batchSize, flushIntervalMs, maxQueueSize, maxRetries, retryBackoff, maxBackoff, spill, logger, onConfigVersion
    this.logger = opts.logger;
    this.queue = [];
    this.dropped = 0;
    this.lastDropLog = 0;
    this.closed = false;
    this.serverFailing = false;
    this.draining = null;
    this.deadline = null;
    this.sleeping = null; // {timer, resolve} of a retry wait, cut short by close()
    this.timer = null;
  }

  start() {
    if (this.timer !== null || this.closed) return;
    const spill = this.opts.spill;
    if (spill) {
      const replay = spill.takeReplayable();
      if (replay.length) {
        this.logger.info(`expd: replaying ${replay.length} spilled events from ${spill.path}`);
        this.queue.unshift(...replay);
      }
    }
    this.timer = setInterval(() => this.drain(), this.opts.flushIntervalMs);
    this.timer.unref?.();
    if (this.queue.length) this.drain();
  }

  /** Queue one event without blocking; false when it was dropped (queue full or closed). */
  enqueue(event) {
    if (this.closed || this.queue.length >= this.opts.maxQueueSize) {
      this.dropped++;
      const now = Date.now();
      if (now - this.lastDropLog >= DROP_LOG_EVERY_MS) {
        this.lastDropLog = now;
        this.logger.warn(`expd: event queue full or closed; ${this.dropped} events dropped so far`);
      }
      return false;
    }
    this.queue.push(event);
    if (this.queue.length === this.opts.batchSize && this.draining === null) {
      const t = setTimeout(() => this.drain(), 0);
      t.unref?.();
    }
    return true;
  }

  /** Drain the queue; one drain at a time, others await it. */
  drain() {
    if (this.draining === null) {
      this.draining = this.drainLoop().finally(() => {
        this.draining = null;
      });
    }
    return this.draining;
  }

  async drainLoop() {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.opts.batchSize);
      try {
        await this.deliver(batch);
      } catch (err) {
        this.logger.error(`expd: unexpected error while sending ${batch.length} events; dropped: ${err?.stack ?? err}`);
        this.dropped += batch.length;
      }
    }
  }

  /** Resolves true once everything queued (now) is sent or given up, false after timeoutMs. */
  async flush(timeoutMs = 5000) {
    let timer;
    const timedOut = new Promise((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
      timer.unref?.();
    });
    const done = (async () => {
      while (this.queue.length > 0 || this.draining !== null) await this.drain();
      return true;
    })();
    try {
      return await Promise.race([done, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stop: send what is queued within timeoutMs, spill (or drop) the rest. */
  async close(timeoutMs) {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.deadline = Date.now() + timeoutMs;
    await this.flush(timeoutMs);
    this.wakeUp();
    if (this.draining) await this.draining;
    this.giveUp(this.queue.splice(0), 'client closed');
  }

  async deliver(batch) {
    const scores = batch.filter((r) => r.type === SCORE);
    const events = scores.length ? batch.filter((r) => r.type !== SCORE) : batch;
    for (const [route, records] of [[EVENTS, events], [SCORES, scores]]) {
      if (!records.length) continue;
      const { bodies, oversized } = encodeBatches(records, route);
      if (oversized) {
        this.logger.error(`expd: ${oversized} ${route.noun} larger than 1 MiB each; dropped`);
        this.dropped += oversized;
      }
      for (const [body, members] of bodies) await this.deliverBody(route, body, members);
    }
  }

  async deliverBody(route, body, events) {
    // While the server is known to be failing, a batch gets one attempt, so
    // batches reach the spill file as fast as they arrive.
    const retries = this.serverFailing ? 0 : this.opts.maxRetries;
    for (let attempt = 0; ; attempt++) {
      if (this.deadline !== null && Date.now() >= this.deadline) {
        this.giveUp(events, 'client closed before the batch could be sent');
        return;
      }
      const { failure, retryAfter } = await this.post(route, body, events);
      if (failure === null) {
        this.serverFailing = false;
        return;
      }
      if (attempt >= retries || this.deadline !== null) {
        this.serverFailing = true;
        this.giveUp(events, `${attempt + 1} attempts failed, last: ${failure}`);
        return;
      }
      await this.sleep(backoffDelay(attempt, this.opts.retryBackoff, this.opts.maxBackoff, retryAfter) * 1000);
    }
  }

  async post(route, body, events) {
    let response;
    try {
      response = await this.http.request('POST', route.path, body);
    } catch (err) {
      if (err instanceof TransportError) return { failure: err.message, retryAfter: null };
      throw err;
    }
    if (response.status >= 200 && response.status < 300) {
      this.acknowledge(route, response, events.length);
      return { failure: null };
    }
    if (RETRYABLE.has(response.status)) {
      return { failure: problemOf(response), retryAfter: parseRetryAfter(response.headers.get('Retry-After')) };
    }
    this.logger.error(`expd: server refused ${events.length} ${route.noun}, dropped: ${problemOf(response)}`);
    this.dropped += events.length;
    return { failure: null };
  }

  acknowledge(route, response, count) {
    const ack = response.body && typeof response.body === 'object' ? response.body : {};
    const rejected = Array.isArray(ack.rejected) ? ack.rejected : [];
    if (rejected.length) {
      this.dropped += rejected.length;
      this.logger.warn(`expd: server rejected ${rejected.length} of ${count} ${route.noun}, dropped (first: ${JSON.stringify(rejected[0])})`);
    }
    if (Number.isInteger(ack.config_version)) this.opts.onConfigVersion(ack.config_version);
  }

  giveUp(events, reason) {
    if (!events.length) return;
    const spill = this.opts.spill;
    if (spill && spill.append(events)) {
      this.logger.warn(`expd: ${reason}; spilled ${events.length} events to ${spill.path}`);
      return;
    }
    this.dropped += events.length;
    this.logger.error(`expd: ${reason}; dropped ${events.length} events (no spill file)`);
  }

  sleep(ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.sleeping = null;
        resolve();
      }, ms);
      timer.unref?.();
      this.sleeping = { timer, resolve };
    });
  }

  wakeUp() {
    const s = this.sleeping;
    if (s) {
      clearTimeout(s.timer);
      this.sleeping = null;
      s.resolve();
    }
  }
}

/** Split records into request bodies under MAX_BATCH_BYTES; count records too big to send at all. */
export function encodeBatches(events, route = EVENTS) {
  const bodies = [];
  const envelope = (parts) => `{"${route.key}":[${parts.join(',')}]}`;
  let parts = [], members = [], size = 13, oversized = 0;
  for (const event of events) {
    const encoded = JSON.stringify(route.wire === null ? event : route.wire(event));
    const length = encoder.encode(encoded).length;
    if (length + 13 > MAX_BATCH_BYTES) {
      oversized++;
      continue;
    }
    if (parts.length && size + length + 1 > MAX_BATCH_BYTES) {
      bodies.push([envelope(parts), members]);
      parts = [];
      members = [];
      size = 13;
    }
    parts.push(encoded);
    members.push(event);
    size += length + 1;
  }
  if (parts.length) bodies.push([envelope(parts), members]);
  return { bodies, oversized };
}
