import { BUSINESS_EVENT, EVENT_TYPES, EXPOSURE, MODEL_CALL, boundModelCallText, newEvent, utcDay } from './events.js';
import { EXPOSE_ALWAYS, EXPOSE_DAILY, EXPOSE_NONE, ExposureLog } from './exposures.js';
import { HttpClient } from './http.js';
import { ModelCall } from './modelcall.js';
import { ConfigPoller } from './poller.js';
import { PriceTable } from './pricing.js';
import { REDACTED_FIELDS, redactor } from './redact.js';
import { InvalidScore, newScore } from './scores.js';
import { EventSender } from './sender.js';
import { SpillFile } from './spill.js';
import { bindUser, currentAttributes, lastCallId } from './user.js';
import { BAGGAGE_EXPERIMENT, BAGGAGE_USER, BAGGAGE_VARIANT, withBaggage } from './baggage.js';
import { wrapProvider } from './wrap.js';

export const DEFAULT_BASE_URL = 'https://api.expd.dev';
export const API_KEY_ENV = 'SERVICE_API_KEY';
export const BASE_URL_ENV = 'SERVICE_BASE_URL';
const MAX_REMEMBERED_UNKNOWN = 1000;

/** Thrown by new Client() when neither apiKey nor SERVICE_API_KEY is set. */
export class MissingApiKeyError extends Error {
  constructor() {
    super(`expd: pass apiKey or set ${API_KEY_ENV}`);
    this.name = 'MissingApiKeyError';
  }
}

const quietLogger = {
  debug() {},
  info() {},
  warn: (m) => console.warn(m),
  error: (m) => console.error(m),
};

function env(name) {
  return globalThis.process?.env?.[name] || undefined;
}

/**
 * An expd client: assigns locally from a polled config and sends events in
 * the background. Nothing on the caller's path does network I/O or throws
 * because the service misbehaves. See README.md for every option.
 */
export class Client {
  constructor(options = {}) {
    const key = options.apiKey || env(API_KEY_ENV);
    if (!key) throw new MissingApiKeyError();
    this.baseUrl = (options.baseUrl || env(BASE_URL_ENV) || DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.captureText = options.captureText ?? true;
    this.closeTimeoutMs = options.closeTimeoutMs ?? 5000;
    this.logger = options.logger ?? quietLogger;
    this.closed = false;
    this.unknown = new Set();
    this.prices = new PriceTable(options.modelPrices, this.logger);
    this.redactText = redactor(options.redact, options.redactPatterns, this.logger);
    // Publishable keys: expd_pk_..., or pk_... issued before the expd_ prefixes.
    this.publishable = key.startsWith('expd_pk_') || key.startsWith('pk_');
    const http = new HttpClient(this.baseUrl, key, options.requestTimeoutMs ?? 10_000, options.fetch);
    this.exposures = new ExposureLog(options.exposureCacheSize ?? 100_000);
    this.poller = new ConfigPoller(http, options.pollIntervalMs ?? 60_000, this.logger, [...(options.experiments ?? [])]);
    this.sender = new EventSender(http, {
      batchSize: options.batchSize ?? 500,
      flushIntervalMs: options.flushIntervalMs ?? 1000,
      maxQueueSize: options.maxQueueSize ?? 10_000,
      maxRetries: options.maxRetries ?? 5,
      retryBackoff: (options.retryBackoffMs ?? 500) / 1000,
      maxBackoff: (options.maxBackoffMs ?? 30_000) / 1000,
      spill: options.spillPath ? new SpillFile(options.spillPath, this.logger) : null,
      logger: this.logger,
      onConfigVersion: (v) => this.poller.noticeVersion(v),
    });
    this.poller.start();
    this.sender.start();
    // Send what is queued when a Node process runs out of work.
    this.onBeforeExit = () => this.close();
    globalThis.process?.once?.('beforeExit', this.onBeforeExit);
  }

  /** True once a config has loaded. */
  get ready() {
    return this.poller.snapshot !== null;
  }

  /** The loaded config's version, or null before the first load. */
  get configVersion() {
    return this.poller.snapshot?.version ?? null;
  }

  /** Events lost: queue full, refused by the server, or undeliverable without a spill file. */
  get droppedEvents() {
    return this.sender.dropped;
  }

  /**
   * Resolves true once a config is loaded; false after timeoutMs, at once when
   * the server refuses the key, or when the client closes. It always settles,
   * so the caller's fallback runs even when the server is down.
   */
  waitUntilReady(timeoutMs = 5000) {
    return this.poller.waitLoaded(timeoutMs);
  }

  /**
   * The user's variant by local bucketing on the polled config; null until it
   * loads (treat as control). The first call per (experiment, user, variant,
   * UTC day) also queues an exposure. attributes (JSON values; default: those
   * bound by asUser for this user) are what the experiment's targeting reads:
   * a user who does not match gets control, outside the experiment, with no
   * exposure (docs/targeting.md).
   */
  assign(experiment, userId, attributes = null) {
    return this._decide(experiment, userId, EXPOSE_DAILY, attributes)?.variant ?? null;
  }

  /**
   * assign with the whole decision, as POST /v1/assign answers it, or null
   * until the config loads: {variant, inExperiment, reasonCode}. inExperiment
   * says whether the user counts in the experiment's analysis; reasonCode is
   * 'not_running' (draft, scheduled or stopped: control for everyone),
   * 'shipped' (the shipped variant for everyone), 'not_targeted' (the
   * attributes do not match the targeting: control, outside the experiment),
   * 'pinned' (the sticky filters keep the user on the variant they were first
   * assigned) or 'bucketed' (the bucket map's variant); 'holdout' and 'layer'
   * are reserved. Queues the same exposure as assign.
   */
  assignDetail(experiment, userId, attributes = null) {
    return this._decide(experiment, userId, EXPOSE_DAILY, attributes);
  }

  /**
   * The decision of assignDetail without queueing an exposure, for
   * integrations that record the exposure themselves once the value is used
   * (the OpenFeature provider does it in an after-evaluation hook, with
   * assignDetail). Null until the config loads or for an unknown experiment.
   */
  peekDetail(experiment, userId, attributes = null) {
    return this._decide(experiment, userId, EXPOSE_NONE, attributes);
  }

  /** {variant, prompt, fallback}: the variant's prompt, or defaultPrompt with fallback true. */
  getPrompt(experiment, userId, defaultPrompt, attributes = null) {
    const variant = this.assign(experiment, userId, attributes);
    const prompt = variant === null ? null : this.experimentOf(experiment)?.promptOf(variant) ?? null;
    return prompt === null ? { variant, prompt: defaultPrompt, fallback: true } : { variant, prompt, fallback: false };
  }

  /** The variant's custom variables merged over defaults (a new object). */
  getVariables(experiment, userId, defaults = {}, attributes = null) {
    const merged = { ...defaults };
    const variant = this.assign(experiment, userId, attributes);
    if (variant !== null) Object.assign(merged, this.experimentOf(experiment)?.variablesOf(variant) ?? {});
    return merged;
  }

  /**
   * Queue one event; never blocks, never throws; false if it was dropped.
   * event is a type (exposure, model_call, business_event) or a business
   * metric name (sent as a business_event with business_metric = event).
   */
  track(event, payload = {}) {
    try {
      const fields = { ...payload };
      if (!EVENT_TYPES.has(event)) {
        fields.business_metric ??= event;
        event = BUSINESS_EVENT;
      }
      return this._record(event, fields);
    } catch (err) {
      this.logger.error(`expd: track(${event}) failed; event dropped: ${err?.message ?? err}`);
      return false;
    }
  }

  /** Queue a business_event (conversion, revenue, ...) for one user. */
  trackBusiness(experiment, userId, metric, value = 1, variant = null) {
    const fields = { experiment_id: experiment, user_id: userId, business_metric: metric, value };
    if (variant !== null) fields.variant = variant;
    return this.track(BUSINESS_EVENT, fields);
  }

  /**
   * Queue a score of one model call; never blocks, never throws; false if it
   * was dropped. callId is the call's id (lastCallId() inside asUser, or
   * ModelCall.id); value a finite number (booleans count 1 and 0); options
   * { source = 'human' | 'judge' | 'code' (the last two need a secret key),
   * comment (cut to 4 KiB), evaluator, evaluatorVersion, judgeModel (judge
   * only), timestamp (default now; 24 h back to 5 min ahead) }. Invalid
   * input is dropped with a log line. Sent with events, to POST /v1/scores.
   */
  score(callId, name, value, options = {}) {
    try {
      const score = newScore(callId, name, value, options ?? {});
      if (this.publishable && score.source !== 'human') {
        // The server refuses the whole batch for it (403): drop this score only.
        throw new InvalidScore(`source ${score.source} needs a secret key; a publishable key sends human only`);
      }
      return this.sender.enqueue(score);
    } catch (err) {
      const why = err instanceof InvalidScore ? err.message : `failed: ${err?.message ?? err}`;
      this.logger.warn(`expd: score(${callId}, ${name}) dropped: ${why}`);
      return false;
    }
  }

  /** Send what is queued; resolves true if everything went out within timeoutMs. Hand it to waitUntil() on serverless. */
  flush(timeoutMs = 5000) {
    return this.sender.flush(timeoutMs);
  }

  /**
   * Run fn with userId (and the attributes targeting reads) bound for wrapped
   * calls and that user's assignments (AsyncLocalStorage: it follows awaits).
   * Where the application has @opentelemetry/api, fn also runs with W3C
   * baggage expd.user and, when asUserOptions.experiment names an experiment the
   * user is in, expd.experiment and expd.variant (peeked: no exposure), so
   * GenAI spans reach POST /v1/traces attributed (docs/ingest.md).
   */
  asUser(userId, fn, attributes = null, asUserOptions = {}) {
    const user = String(userId);
    const entries = [[BAGGAGE_USER, user]];
    const experiment = asUserOptions?.experiment;
    if (experiment != null) {
      const decision = this.peekDetail(experiment, user, attributes);
      if (decision?.inExperiment) entries.push([BAGGAGE_EXPERIMENT, String(experiment)], [BAGGAGE_VARIANT, decision.variant]);
    }
    return bindUser(user, () => withBaggage(entries, fn), attributes);
  }

  /**
   * Inside asUser: the id of the last model call measured in it (null before
   * one), the event_id of its model_call, set when the call starts (a
   * stream's id is known before its first chunk). Pass it to score().
   */
  lastCallId() {
    return lastCallId();
  }

  /** A Proxy of an OpenAI-style client whose model calls are measured and recorded. */
  wrap(providerClient, experiment) {
    return wrapProvider(providerClient, this, experiment);
  }

  /**
   * Measure one model call to any provider: fn(call) runs with the clock
   * started; its result or error reaches the caller unchanged. call.variant
   * says what to send; call.setUsage / firstToken / response / costUsd add
   * detail; call.id names it for score(). price ({input, output} USD per
   * token) prices this call alone.
   */
  async interceptModelCall(experiment, userId, fn, { model = null, prompt = null, price = null } = {}) {
    const call = new ModelCall(this, experiment, String(userId), { model, prompt, price });
    call.start();
    try {
      const result = await fn(call);
      call.finish();
      return result;
    } catch (err) {
      call.finish(err);
      throw err;
    }
  }

  /** A ModelCall to finish by hand (for callback-style code). */
  startModelCall(experiment, userId, { model = null, prompt = null, price = null } = {}) {
    return new ModelCall(this, experiment, String(userId), { model, prompt, price }).start();
  }

  /** Stop polling and send what is queued within timeoutMs; the rest is spilled or dropped. */
  async close(timeoutMs = this.closeTimeoutMs) {
    if (this.closed) return;
    this.closed = true;
    globalThis.process?.removeListener?.('beforeExit', this.onBeforeExit);
    this.poller.close();
    await this.sender.close(timeoutMs);
  }

  // --- internals ---------------------------------------------------------------

  /** The decision, queueing the exposure mode (EXPOSE_*) owes: once per UTC day, or always (a model call). */
  _decide(experiment, userId, mode, attributes = null) {
    try {
      const found = this.experimentOf(experiment);
      if (found === null) return null;
      const user = typeof userId === 'string' ? userId : String(userId);
      // A model call's exposure also counts as the day's, so assign() adds none after it.
      const day = utcDay(Date.now());
      const decision = this.exposures.resolve(found, user, day, mode, attributes ?? currentAttributes(user));
      if (this.exposures.due) {
        this.sender.enqueue(newEvent(EXPOSURE, {
          experiment_id: found.id,
          user_id: user,
          variant: decision.variant,
          config_version: this.poller.snapshot.version,
        }));
      }
      if (mode !== EXPOSE_NONE) {
        // The user's side of each holdout whose step this decision evaluated, held out or not.
        for (const [holdoutId, variant] of this.exposures.holdoutsDue(found, user, this.exposures.facts, day)) {
          this.sender.enqueue(newEvent(EXPOSURE, {
            experiment_id: holdoutId,
            user_id: user,
            variant,
            config_version: this.poller.snapshot.version,
          }));
        }
      }
      return decision;
    } catch (err) {
      this.logger.error(`expd: assign(${experiment}) failed; answering null: ${err?.message ?? err}`);
      return null;
    }
  }

  /** For ModelCall: the decision, with an exposure queued for this call (none outside the experiment). */
  _decideCall(experiment, userId) {
    return this._decide(experiment, userId, EXPOSE_ALWAYS);
  }

  experimentOf(experiment) {
    const snapshot = this.poller.snapshot;
    if (snapshot === null) return null;
    const found = snapshot.find(experiment);
    if (found === null && !this.unknown.has(experiment) && this.unknown.size < MAX_REMEMBERED_UNKNOWN) {
      this.unknown.add(experiment);
      this.logger.warn(`expd: experiment ${experiment} is not running in config ${snapshot.version}`);
    }
    return found;
  }

  /** Canonicalise the experiment, fill a missing variant, bound text, stamp and enqueue. */
  _record(type, fields) {
    const found = this.poller.snapshot?.find(String(fields.experiment_id)) ?? null;
    if (found !== null) {
      fields.experiment_id = found.id;
      if ((fields.variant === undefined || fields.variant === null) && fields.user_id !== undefined && fields.user_id !== null) {
        // assign()'s cache: no hashing for a user seen on this config.
        const decision = this.exposures.resolve(found, String(fields.user_id), 0, EXPOSE_NONE);
        if (decision !== null) fields.variant = decision.variant;
      }
    }
    if (fields.variant === null || fields.variant === undefined) delete fields.variant;
    if (type === MODEL_CALL) {
      const redact = this.redactText;
      if (redact !== null) {
        for (const name of REDACTED_FIELDS) if (typeof fields[name] === 'string') fields[name] = redact(fields[name]);
      }
      boundModelCallText(fields);
    }
    return this.sender.enqueue(newEvent(type, fields));
  }
}
