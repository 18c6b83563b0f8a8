import { cutUtf8 } from './events.js';

// Wire scores: feedback on one model call, sent to POST /v1/scores. A score
// is queued beside events as a record of type `score` (the sender posts
// those to /v1/scores without the type). Everything the server would refuse
// is refused here, because one bad score gets its whole batch refused (400):
// the caller's bad input must cost that score only.

export const SCORE = 'score';
export const SCORE_SOURCES = new Set(['human', 'judge', 'code']);
export const MAX_COMMENT_BYTES = 4 * 1024;
// Bounds of the other text fields, in UTF-8 bytes (docs/quality.md).
export const SCORE_TEXT_BYTES = { call_id: 128, name: 128, evaluator: 256, evaluator_version: 128, judge_model: 256 };
// The server's window for a score's timestamp (that of live events).
const MAX_AGE_MS = 24 * 3600 * 1000;
const MAX_AHEAD_MS = 5 * 60 * 1000;

const CALL_ID = /^[\x21-\x7e]+$/; // a model_call's event_id: printable ASCII without spaces
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/; // the rule of business_metric names
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;
const encoder = new TextEncoder();

/** A score the server would refuse; the message names the field. */
export class InvalidScore extends Error {}

function text(field, value, { required = false, pattern = null } = {}) {
  if (typeof value !== 'string') throw new InvalidScore(`${field} must be a string, got ${value === null ? 'null' : typeof value}`);
  if (required && value === '') throw new InvalidScore(`${field} is required`);
  if (value.includes('\0')) throw new InvalidScore(`${field} must not contain NUL characters`);
  const limit = SCORE_TEXT_BYTES[field];
  if (limit !== undefined && encoder.encode(value).length > limit) throw new InvalidScore(`${field} must be at most ${limit} bytes`);
  if (pattern !== null && !pattern.test(value)) throw new InvalidScore(`${field} has characters it may not have: ${JSON.stringify(value)}`);
  return value;
}

function number(value) {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value !== 'number') throw new InvalidScore(`value must be a number or a boolean, got ${value === null ? 'null' : typeof value}`);
  if (!Number.isFinite(value)) throw new InvalidScore(`value must be finite, got ${value}`);
  return value;
}

function timestamp(value) {
  const now = Date.now();
  if (value === undefined || value === null) return new Date(now).toISOString();
  const ms = value instanceof Date ? value.getTime()
    : typeof value === 'string' ? (RFC3339.test(value) ? Date.parse(value) : NaN)
      : typeof value === 'number' ? value : NaN;
  if (!Number.isFinite(ms)) throw new InvalidScore(`timestamp must be a Date, Unix milliseconds or RFC 3339 text, got ${String(value)}`);
  if (ms < now - MAX_AGE_MS || ms > now + MAX_AHEAD_MS) {
    throw new InvalidScore(`timestamp ${String(value)} is outside the accepted window (24 hours back, 5 minutes ahead)`);
  }
  return typeof value === 'string' ? value : new Date(ms).toISOString();
}

/** The queue record of one score; throws InvalidScore naming the bad field. */
export function newScore(callId, name, value, options = {}) {
  const { source = 'human', comment, evaluator, evaluatorVersion, judgeModel } = options;
  if (!SCORE_SOURCES.has(source)) throw new InvalidScore(`source must be one of human, judge, code, got ${String(source)}`);
  if (judgeModel !== undefined && judgeModel !== null && source !== 'judge') throw new InvalidScore("judge_model is a field of source 'judge' scores only");
  const record = {
    type: SCORE,
    call_id: text('call_id', callId, { required: true, pattern: CALL_ID }),
    name: text('name', name, { required: true, pattern: NAME }),
    value: number(value),
    timestamp: timestamp(options.timestamp),
    source,
  };
  // Feedback text longer than the bound is cut, not refused: the rating still counts.
  if (comment !== undefined && comment !== null) record.comment = cutUtf8(text('comment', comment), MAX_COMMENT_BYTES);
  for (const [field, given] of [['evaluator', evaluator], ['evaluator_version', evaluatorVersion], ['judge_model', judgeModel]]) {
    if (given !== undefined && given !== null) record[field] = text(field, given);
  }
  return record;
}
