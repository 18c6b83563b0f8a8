import { MODEL_CALL, randomUUID } from './events.js';
import { outside } from './decision.js';
import { asPrice, costUsd } from './pricing.js';
import { noteCall } from './user.js';

const now = () => (globalThis.performance?.now ? globalThis.performance.now() : Date.now());

/**
 * One measured model call. Creating it records the exposure (one per call);
 * finish() records a model_call event with the latency, the error if any,
 * and what the caller reported: firstToken() for streams, setUsage(), response
 * text, costUsd. `variant` says what to send to the provider (null: control).
 * `id` is the event_id of the model_call it records, known from the start:
 * pass it to Client.score. Without an explicit costUsd, the usage is priced
 * at `price` (this call's, or null: the client's table by model).
 */
export class ModelCall {
  constructor(client, experiment, userId, { model = null, prompt = null, price = null } = {}) {
    this.id = randomUUID();
    this.experiment = experiment;
    this.userId = userId;
    this.model = model;
    this.prompt = prompt;
    this.response = null;
    this.costUsd = null;
    this.price = price === null ? null : asPrice(price);
    this.inputTokens = null;
    this.outputTokens = null;
    this.totalTokens = null;
    const decided = client._decideCall(experiment, userId);
    this.variant = decided?.variant ?? null;
    this.client = client;
    this.started = now();
    this.firstTokenAt = null;
    // A user outside the experiment (not targeted): the call records nothing,
    // since every event would enter the experiment's analysis.
    this.finished = outside(decided);
    if (!this.finished) noteCall(this.id);
  }

  /** Restart the clock when the provider is called. */
  start() {
    this.started = now();
    return this;
  }

  /** Mark the first streamed token (only the first mark counts). */
  firstToken() {
    if (this.firstTokenAt === null) this.firstTokenAt = now();
  }

  setUsage(inputTokens = null, outputTokens = null, totalTokens = null) {
    this.inputTokens = inputTokens;
    this.outputTokens = outputTokens;
    if (totalTokens === null && inputTokens !== null) totalTokens = inputTokens + (outputTokens ?? 0);
    this.totalTokens = totalTokens;
  }

  /** Record the call once; later calls are ignored. Never throws. */
  finish(error = null) {
    if (this.finished) return;
    this.finished = true;
    const ended = now();
    const fields = {
      event_id: this.id,
      experiment_id: this.experiment,
      user_id: this.userId,
      variant: this.variant,
      model: this.model,
      latency_ms: millis(ended - this.started),
      input_tokens: this.inputTokens,
      output_tokens: this.outputTokens,
      total_tokens: this.totalTokens,
      error: error === null || error === undefined ? null : `${error?.name ?? 'Error'}: ${error?.message ?? error}`,
    };
    if (this.firstTokenAt !== null) fields.time_to_first_token_ms = millis(this.firstTokenAt - this.started);
    const cost = this._cost();
    if (cost !== null) fields.cost_usd = cost;
    if (this.prompt !== null) fields.prompt = this.prompt;
    if (this.response !== null) fields.response = this.response;
    this.client._record(MODEL_CALL, fields);
  }

  /** The explicit cost, else the usage priced at this call's price or the client's table. */
  _cost() {
    if (this.costUsd !== null) return this.costUsd;
    try {
      if (this.price !== null) return costUsd(this.price, this.inputTokens, this.outputTokens);
      return this.client.prices.cost(this.model, this.inputTokens, this.outputTokens);
    } catch {
      return null; // pricing must never break the call's record
    }
  }
}

function millis(ms) {
  return Math.round(ms * 1000) / 1000;
}
