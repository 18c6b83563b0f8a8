import { nodeCrypto } from './platform.js';

// Wire events: ids, timestamps, per-type text bounds.

export const EXPOSURE = 'exposure';
export const MODEL_CALL = 'model_call';
export const BUSINESS_EVENT = 'business_event';
export const EVENT_TYPES = new Set([EXPOSURE, MODEL_CALL, BUSINESS_EVENT]);

// The server's bounds on model_call text fields, in UTF-8 bytes: a longer
// field gets the whole event rejected, so long text is cut instead.
export const MODEL_CALL_TEXT_BYTES = { prompt: 64 * 1024, response: 64 * 1024, error: 4 * 1024, model: 256 };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A fresh version-4 UUID (event ids, call ids). */
export function randomUUID() {
  if (nodeCrypto?.randomUUID) return nodeCrypto.randomUUID();
  if (globalThis.crypto?.randomUUID) return globalThis.crypto.randomUUID();
  const b = new Uint8Array(16);
  globalThis.crypto.getRandomValues(b);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** text cut to at most maxBytes of UTF-8, never inside a character. */
export function cutUtf8(text, maxBytes) {
  if (text.length * 3 <= maxBytes) return text;
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return decoder.decode(bytes.subarray(0, end));
}

/** Cut a model_call's text fields to the server's bounds, in place. */
export function boundModelCallText(fields) {
  for (const [name, max] of Object.entries(MODEL_CALL_TEXT_BYTES)) {
    if (typeof fields[name] === 'string') fields[name] = cutUtf8(fields[name], max);
  }
}

/** fields stamped with a type, a fresh event_id and a timestamp (kept when the caller set them). */
export function newEvent(type, fields, now = Date.now()) {
  return { event_id: randomUUID(), timestamp: new Date(now).toISOString(), ...fields, type };
}

/** The UTC day number (days since 1970-01-01) of a Unix time in milliseconds. */
export function utcDay(ms) {
  return Math.floor(ms / 86_400_000);
}
