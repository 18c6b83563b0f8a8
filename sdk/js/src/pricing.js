import { MODEL_PRICES } from './prices.js';

// Model prices: the embedded table (prices.js, generated from
// sdk/prices/model_prices.json) under a client's overrides, and the cost of
// one call from its usage. Lookup (the table's rule): the model name
// lower-cased; else without a provider prefix and one trailing version
// suffix, so gpt-4o-2024-08-06 and openai/gpt-4o price as gpt-4o.

const VERSION_SUFFIX = /[-@](?:\d{4}-\d{2}-\d{2}|\d{8}|\d{3,4}|latest)$/;
const MAX_REMEMBERED_UNKNOWN = 1000;

/** {input, output} USD per token from {input, output} or an [input, output] pair. */
export function asPrice(value) {
  const [input, output] = Array.isArray(value) ? value : [value.input, value.output];
  return { input: Number(input), output: Number(output) };
}

/** The cost of a call's tokens at price; null without input tokens. */
export function costUsd(price, inputTokens, outputTokens) {
  if (inputTokens === null || inputTokens === undefined) return null;
  return inputTokens * price.input + (outputTokens ?? 0) * price.output;
}

export class PriceTable {
  constructor(overrides = {}, logger) {
    this.overrides = new Map(Object.entries(overrides ?? {}).map(([name, p]) => [name.toLowerCase(), asPrice(p)]));
    this.logger = logger;
    this.unknown = new Set();
  }

  /** The price of model, or null (logged once per model) when neither table has it. */
  priceOf(model) {
    if (typeof model !== 'string' || model === '') return null;
    const name = model.toLowerCase();
    const base = name.slice(name.lastIndexOf('/') + 1).replace(VERSION_SUFFIX, '');
    for (const key of [name, base]) {
      const found = this.overrides.get(key);
      if (found !== undefined) return found;
    }
    for (const key of [name, base]) {
      if (Object.hasOwn(MODEL_PRICES.models, key)) return MODEL_PRICES.models[key];
    }
    if (!this.unknown.has(model) && this.unknown.size < MAX_REMEMBERED_UNKNOWN) {
      this.unknown.add(model);
      this.logger.info(`expd: no price for model ${model}; its calls record no cost_usd (pass modelPrices)`);
    }
    return null;
  }

  /** The cost of one call, or null (unknown model, no input tokens). */
  cost(model, inputTokens, outputTokens) {
    if (inputTokens === null || inputTokens === undefined) return null;
    const price = this.priceOf(model);
    return price === null ? null : costUsd(price, inputTokens, outputTokens);
  }
}
