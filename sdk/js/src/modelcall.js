import { MODEL_CALL } from './events.js';

const now = () => (globalThis.performance?.now ? globalThis.performance.now() : Date.now());

/**
 * One measured model call. Creating it records the exposure (one per call);
 * finish() records a model_call event with the latency, the error if any,
 * and what the caller reported: firstToken() for streams, setUsage(), response
 * text, costUsd. `variant` says what to send to the provider (null: control).
 */
export class ModelCall {
  constructor(client, experiment, userId, { model = null, prompt = null } = {}) {
    this.experiment = experiment;
    this.userId = userId;
    this.model = model;
    this.prompt = prompt;
    this.response = null;
    this.costUsd = null;
    this.inputTokens = null;
    this.outputTokens = null;
    this.totalTokens = null;
    this.variant = client._exposeCall(experiment, userId);
    this.client = client;
    this.started = now();
    this.firstTokenAt = null;
    this.finished = false;
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
    if (this.costUsd !== null) fields.cost_usd = this.costUsd;
    if (this.prompt !== null) fields.prompt = this.prompt;
    if (this.response !== null) fields.response = this.response;
    this.client._record(MODEL_CALL, fields);
  }
}

function millis(ms) {
  return Math.round(ms * 1000) / 1000;
}
