// Type declarations of the expd client (hand-written; the package has no build-time TypeScript).

/** Where log lines go; default: warnings and errors to console, nothing else. */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface ClientOptions {
  /** Publishable (pk_...) or secret (sk_...) key; default process.env.SERVICE_API_KEY. */
  apiKey?: string;
  /** Default process.env.SERVICE_BASE_URL, else https://api.expd.dev. */
  baseUrl?: string;
  /** Names or ids the application uses; a warning is logged when a loaded config does not run one. */
  experiments?: Iterable<string>;
  /** Milliseconds between config polls (ETag / 304). Default 60,000. */
  pollIntervalMs?: number;
  /** Milliseconds between event flushes; a full batch flushes at once. Default 1,000. */
  flushIntervalMs?: number;
  /** Events per request, 1..1,000 (requests also stay under 1 MiB). Default 500. */
  batchSize?: number;
  /** Queued events beyond which track() drops (counted in droppedEvents). Default 10,000. */
  maxQueueSize?: number;
  /** Retries of one batch after its first attempt. Default 5. */
  maxRetries?: number;
  /** First retry delay, doubling up to maxBackoffMs; a Retry-After header wins. Defaults 500 and 30,000. */
  retryBackoffMs?: number;
  maxBackoffMs?: number;
  /** Milliseconds for one HTTP request. Default 10,000. */
  requestTimeoutMs?: number;
  /** Node only: JSON-lines file for batches that could not be sent, replayed within 24 h by the next client on the same path. */
  spillPath?: string;
  /** (experiment, user) pairs remembered (variant on the current config, day of the last exposure): one exposure per (experiment, user, variant, UTC day), repeat assigns without hashing. Default 100,000. */
  exposureCacheSize?: number;
  /** Milliseconds close() waits to send what is queued. Default 5,000. */
  closeTimeoutMs?: number;
  /** Record prompt and response text in model_call events. Default true. */
  captureText?: boolean;
  /** USD per token by model name, over the shipped table: measured calls without an explicit costUsd record their usage's cost. */
  modelPrices?: Record<string, ModelPrice | [number, number]>;
  /** A fetch implementation; default globalThis.fetch. */
  fetch?: typeof globalThis.fetch;
  logger?: Logger;
  /**
   * true: replace emails, phone numbers, card numbers, IBANs, IP addresses and API keys or tokens in every
   * model_call's prompt, response and error by typed placeholders ([EMAIL], ...) before the event is queued. A function
   * does that, then runs on the result (it can remove more, never less; if it throws or returns a non-string, the
   * text is sent as [REDACTED]). Default false: off costs nothing.
   */
  redact?: boolean | ((text: string) => string);
  /** Custom patterns, as GET /v1/privacy lists them, applied before the built-in detectors (they turn redaction on). */
  redactPatterns?: Iterable<RedactPattern>;
}

/** A custom redaction pattern: every non-empty match of regex becomes placeholder (verbatim; empty: [REDACTED]). */
export interface RedactPattern {
  name?: string;
  regex: string;
  placeholder?: string;
}

/** A user's attributes for targeting conditions: JSON values. */
export type Attributes = Record<string, unknown>;

/** Why a user got their variant (the reason_code of POST /v1/assign). */
export type ReasonCode = 'not_running' | 'shipped' | 'holdout' | 'layer' | 'not_targeted' | 'pinned' | 'bucketed';

/** A user's assignment in one experiment, as POST /v1/assign decides it. */
export interface Decision {
  /** The user's variant. */
  variant: string;
  /** True when the user counts in the experiment's analysis (reasonCode pinned or bucketed). */
  inExperiment: boolean;
  /** The rule that decided the variant. */
  reasonCode: ReasonCode;
}

export interface PromptAnswer {
  /** The user's variant, or null before the config loads (treat as control). */
  variant: string | null;
  /** The variant's prompt, or the default. */
  prompt: string;
  /** True when the default was used. */
  fallback: boolean;
}

/** Wire fields of an event; extra fields are sent as given. */
export interface EventPayload {
  experiment_id?: string;
  user_id?: string;
  variant?: string;
  event_id?: string;
  timestamp?: string;
  value?: number;
  business_metric?: string;
  model?: string;
  latency_ms?: number;
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
  cost_usd?: number;
  time_to_first_token_ms?: number;
  error?: string | null;
  prompt?: string;
  response?: string;
  [field: string]: unknown;
}

/** USD per input token and per output token. */
export interface ModelPrice {
  input: number;
  output: number;
}

/** Options of Client.score. */
export interface AsUserOptions {
  /** An experiment (name or id) whose variant the baggage carries for OpenTelemetry GenAI spans. */
  experiment?: string;
}

export interface ScoreOptions {
  /** Who scored: 'human' (default), 'judge' or 'code' (the last two need a secret key). */
  source?: 'human' | 'judge' | 'code';
  /** Free text, cut to 4 KiB. */
  comment?: string;
  evaluator?: string;
  evaluatorVersion?: string;
  judgeModel?: string;
  /** When the score was given; default now. RFC 3339 text, a Date or Unix milliseconds. */
  timestamp?: string | Date | number;
}

export interface ModelCallOptions {
  model?: string | null;
  prompt?: string | null;
  /** Prices this call alone (else the client's table by model). */
  price?: ModelPrice | [number, number] | null;
}

/** One measured model call; see Client.interceptModelCall. */
export declare class ModelCall {
  /** The event_id of the model_call this records: the call id for Client.score. */
  readonly id: string;
  readonly experiment: string;
  readonly userId: string;
  /** The user's variant (null: treat as control). */
  readonly variant: string | null;
  model: string | null;
  prompt: string | null;
  response: string | null;
  /** An explicit cost; it wins over the price table. */
  costUsd: number | null;
  price: ModelPrice | null;
  inputTokens: number | null;
  outputTokens: number | null;
  totalTokens: number | null;
  readonly finished: boolean;
  start(): this;
  firstToken(): void;
  setUsage(inputTokens?: number | null, outputTokens?: number | null, totalTokens?: number | null): void;
  finish(error?: unknown): void;
}

export declare class MissingApiKeyError extends Error {}

export declare class Client {
  constructor(options?: ClientOptions);
  readonly baseUrl: string;
  readonly ready: boolean;
  readonly configVersion: number | null;
  readonly droppedEvents: number;
  waitUntilReady(timeoutMs?: number): Promise<boolean>;
  /** attributes: what the experiment's targeting reads (default: those bound by asUser for this user); docs/targeting.md. */
  assign(experiment: string, userId: string, attributes?: Attributes | null): string | null;
  assignDetail(experiment: string, userId: string, attributes?: Attributes | null): Decision | null;
  /** assignDetail's decision without queueing an exposure (for integrations that record it themselves). */
  peekDetail(experiment: string, userId: string, attributes?: Attributes | null): Decision | null;
  getPrompt(experiment: string, userId: string, defaultPrompt: string, attributes?: Attributes | null): PromptAnswer;
  getVariables<T extends Record<string, unknown>>(experiment: string, userId: string, defaults?: T, attributes?: Attributes | null): T & Record<string, unknown>;
  track(event: string, payload?: EventPayload): boolean;
  trackBusiness(experiment: string, userId: string, metric: string, value?: number, variant?: string | null): boolean;
  /** Queue a score of one model call (never throws; false if dropped: invalid input or a full queue). */
  score(callId: string, name: string, value: number | boolean, options?: ScoreOptions): boolean;
  /** Inside asUser: the id of the last model call measured in it, else null. */
  lastCallId(): string | null;
  flush(timeoutMs?: number): Promise<boolean>;
  /**
   * Run fn with the user bound; with @opentelemetry/api present, also with W3C baggage expd.user
   * (and expd.experiment, expd.variant when options.experiment names an experiment the user is in).
   */
  asUser<R>(userId: string, fn: () => R, attributes?: Attributes | null, options?: AsUserOptions): R;
  wrap<P extends object>(providerClient: P, experiment: string): P;
  interceptModelCall<R>(experiment: string, userId: string, fn: (call: ModelCall) => R | Promise<R>,
    options?: ModelCallOptions): Promise<R>;
  startModelCall(experiment: string, userId: string, options?: ModelCallOptions): ModelCall;
  close(timeoutMs?: number): Promise<void>;
}

export interface Range {
  variant: string;
  start: number;
  end: number;
}

export declare class BucketMap {
  constructor(ranges: Range[]);
  variantFor(bucket: number): string | null;
}

export interface StickyFilter {
  variant: string;
  bits: number;
  hashes: number;
  /** base64 */
  data: string;
}

export declare class Sticky {
  constructor(raw: { filters?: StickyFilter[]; exceptions?: Record<string, string> });
  readonly empty: boolean;
  resolve(digest: Uint8Array, mapped: string): string;
}

export declare class ConfigSnapshot {
  readonly version: number;
  readonly etag: string | null;
  static parse(body: unknown, etag?: string | null): ConfigSnapshot;
}

export declare function bucketOf(experimentId: string, salt: string, bucketCount: number, userId: string): number;
/** text with the built-in detectors' matches replaced by typed placeholders ([EMAIL], [PHONE], [CARD], [IBAN], [IP], [SECRET]); patterns run first. */
export declare function redact(text: string, patterns?: Iterable<RedactPattern>): string;
export declare function sha256(text: string): Uint8Array;
export declare function sha256Pure(text: string): Uint8Array;
export declare const VERSION: string;
