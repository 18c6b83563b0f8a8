// Reading OpenAI-style requests, responses and stream chunks. Every reader
// returns null for what it cannot find: an unfamiliar shape costs a field,
// never an exception.

function int(v) {
  return Number.isInteger(v) ? v : null;
}

/** [input, output, total] tokens of a response or final chunk, or null. */
export function usageOf(obj) {
  const u = obj?.usage;
  if (!u || typeof u !== 'object') return null;
  const input = int(u.prompt_tokens) ?? int(u.input_tokens);
  const output = int(u.completion_tokens) ?? int(u.output_tokens);
  let total = int(u.total_tokens);
  if (total === null && input !== null) total = input + (output ?? 0);
  return [input, output, total];
}

export function modelOf(obj) {
  return typeof obj?.model === 'string' ? obj.model : null;
}

/** The generated text of a chat, completions or responses answer. */
export function responseText(obj) {
  if (typeof obj?.output_text === 'string') return obj.output_text;
  const first = Array.isArray(obj?.choices) ? obj.choices[0] : undefined;
  if (first !== undefined) {
    const text = first?.message?.content ?? first?.text;
    return typeof text === 'string' ? text : null;
  }
  return outputText(obj?.output);
}

function outputText(output) {
  if (!Array.isArray(output)) return null;
  const parts = [];
  for (const item of output) {
    for (const part of Array.isArray(item?.content) ? item.content : []) {
      if (typeof part?.text === 'string') parts.push(part.text);
    }
  }
  return parts.length ? parts.join('') : null;
}

/** The request's prompt as text: messages, input or prompt. */
export function promptText(body) {
  for (const name of ['messages', 'input', 'prompt']) {
    const v = body?.[name];
    if (v === undefined || v === null) continue;
    return typeof v === 'string' ? v : JSON.stringify(v);
  }
  return null;
}

/** Accumulates what a stream's chunks tell: text, model and final usage. */
export class StreamReader {
  constructor() {
    this.model = null;
    this.usage = null;
    this.parts = [];
  }

  observe(chunk) {
    this.model = modelOf(chunk) ?? this.model;
    this.usage = usageOf(chunk) ?? this.usage;
    if (typeof chunk?.type === 'string') {
      if (chunk.type === 'response.output_text.delta' && typeof chunk.delta === 'string') this.parts.push(chunk.delta);
      else if (chunk.type === 'response.completed') {
        this.model = modelOf(chunk.response) ?? this.model;
        this.usage = usageOf(chunk.response) ?? this.usage;
      }
      return;
    }
    for (const choice of Array.isArray(chunk?.choices) ? chunk.choices : []) {
      const text = choice?.delta?.content ?? choice?.text;
      if (typeof text === 'string') this.parts.push(text);
    }
  }

  text() {
    return this.parts.length ? this.parts.join('') : null;
  }
}
