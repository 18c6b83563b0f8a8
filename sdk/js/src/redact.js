// Redaction of prompt and response texts before an event leaves the process.
// The built-in detectors and their order, boundaries and validators are
// specified by testdata/redaction/README.md (the server's `redact` payload
// policy applies the same ones at ingest); every case of the shared corpus
// testdata/redaction/cases.json is a test of this module.

export const DEFAULT_PLACEHOLDER = '[REDACTED]';

// The model_call fields redaction applies to, as the server's payload policy
// (provider errors quote keys and input).
export const REDACTED_FIELDS = ['prompt', 'response', 'error'];

const set = (chars) => new Set(chars);
const DIGITS = set('0123456789');
const ALNUM = set('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789');
const TOKEN = set([...ALNUM, '_', '-']);
const NONE = set('');
const plus = (base, chars) => set([...base, ...chars]);
const digitCount = (v) => { let n = 0; for (const c of v) if (DIGITS.has(c)) n++; return n; };

function iban(value) {
  const s = value.replaceAll(' ', '');
  if (s.length < 15 || s.length > 34) return false;
  let r = 0;
  for (const ch of s.slice(4) + s.slice(0, 4)) {
    const code = ch.charCodeAt(0);
    r = DIGITS.has(ch) ? (r * 10 + code - 48) % 97 : (r * 100 + code - 55) % 97;
  }
  return r === 1;
}

function card(value) {
  const digits = [...value].filter((c) => DIGITS.has(c)).map((c) => c.charCodeAt(0) - 48);
  if (digits.length < 13 || digits.length > 19 || digits[0] < 2 || digits[0] > 6) return false;
  let total = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits[digits.length - 1 - i];
    if (i % 2 === 1) { d *= 2; if (d > 9) d -= 9; }
    total += d;
  }
  return total % 10 === 0;
}

function ipv4(value) {
  const parts = value.split('.');
  if (parts.length !== 4) return false;
  return parts.every((p) => p.length >= 1 && p.length <= 3 && [...p].every((c) => DIGITS.has(c)) &&
    (p === '0' || (p[0] !== '0' && Number(p) <= 255)));
}

const groupsOk = (groups) => groups.every((g) => g.length >= 1 && g.length <= 4);

function ipv6(value) {
  if (value.includes('.')) {
    const i = value.lastIndexOf(':');
    if (!ipv4(value.slice(i + 1))) return false;
    value = value.slice(0, i + 1) + '0:0';
  }
  const cut = value.indexOf('::');
  if (cut >= 0) {
    const groups = [];
    for (const side of [value.slice(0, cut), value.slice(cut + 2)]) {
      if (side === '') continue;
      const parts = side.split(':');
      if (!groupsOk(parts)) return false;
      groups.push(...parts);
    }
    return groups.length >= 2 && groups.length <= 7;
  }
  const parts = value.split(':');
  return parts.length === 8 && groupsOk(parts);
}

const e164 = (v) => { const n = digitCount(v); return n >= 8 && n <= 15; };
const parentheses = (v) => v.includes('(') === v.includes(')');
const trunk = (v) => { const n = digitCount(v); return (n === 10 || n === 11) && !(v.includes(' ') && v.includes('-')); };

function d(source, { left = NONE, right = NONE, noDotDigit = false, validator = null, placeholder = '[SECRET]' } = {}) {
  return { regex: new RegExp(source, 'g'), left, right, noDotDigit, validator, placeholder };
}

// The table of testdata/redaction/README.md, in its order.
const BUILTINS = [
  d('-----BEGIN [A-Z ]*PRIVATE KEY-----[^-]*-----END [A-Z ]*PRIVATE KEY-----'),
  d('eyJ[A-Za-z0-9_-]{5,}\\.eyJ[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]*', { left: TOKEN, right: TOKEN }),
  d('([Bb]earer[ ]+)[A-Za-z0-9._~+/=-]{12,}', { left: ALNUM, validator: (v) => digitCount(v) > 0 }),
  d('(Authorization:[ ]*Basic[ ]+)[A-Za-z0-9+/=]{8,}'),
  d('sk-[A-Za-z0-9_-]{20,}', { left: TOKEN }),
  d('(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}', { left: TOKEN }),
  d('(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})', { left: TOKEN }),
  d('(?:AKIA|ASIA)[A-Z0-9]{16}', { left: ALNUM, right: ALNUM }),
  d('xox[abposr]-[A-Za-z0-9-]{10,}', { left: TOKEN }),
  d('AIza[A-Za-z0-9_-]{35}', { left: TOKEN, right: TOKEN }),
  d('[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]+\\.)+[A-Za-z]{2,24}',
    { left: plus(ALNUM, '._%+-'), right: TOKEN, placeholder: '[EMAIL]' }),
  d('[A-Z]{2}[0-9]{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?)',
    { left: ALNUM, right: ALNUM, validator: iban, placeholder: '[IBAN]' }),
  d('[0-9]{4}(?:[ -]?[0-9]{4}){3}[0-9]{0,3}|[0-9]{4}[ -]?[0-9]{6}[ -]?[0-9]{4,5}',
    { left: ALNUM, right: ALNUM, validator: card, placeholder: '[CARD]' }),
  d('[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3})?',
    { left: plus(ALNUM, ':'), right: plus(ALNUM, ':'), validator: ipv6, placeholder: '[IP]' }),
  d('[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}',
    { left: plus(ALNUM, '.'), right: ALNUM, noDotDigit: true, validator: ipv4, placeholder: '[IP]' }),
  d('\\+[0-9](?:[ .()-]{0,2}[0-9]){6,14}', { left: plus(ALNUM, '+'), right: ALNUM, validator: e164, placeholder: '[PHONE]' }),
  d('(?:1[ .-]?)?\\(?[2-9][0-9]{2}\\)?[ .-]?[0-9]{3}[ .-][0-9]{4}',
    { left: plus(ALNUM, '.-+'), right: ALNUM, noDotDigit: true, validator: parentheses, placeholder: '[PHONE]' }),
  d('0[1-9][0-9]{0,3}(?:[ -][0-9]{2,8}){1,4}',
    { left: plus(ALNUM, '.,:/+-'), right: ALNUM, noDotDigit: true, validator: trunk, placeholder: '[PHONE]' }),
];

function apply(text, det) {
  let out = '';
  let last = 0;
  const n = text.length;
  for (const m of text.matchAll(det.regex)) {
    const start = m.index;
    const end = start + m[0].length;
    if (start > 0 && det.left.has(text[start - 1])) continue;
    if (end < n) {
      const after = text[end];
      if (det.right.has(after) || (det.noDotDigit && after === '.' && end + 1 < n && DIGITS.has(text[end + 1]))) continue;
    }
    // A capturing group is a kept prefix (bearer, basic_auth).
    const valueStart = m[1] === undefined ? start : start + m[1].length;
    if (det.validator !== null && !det.validator(text.slice(valueStart, end))) continue;
    out += text.slice(last, valueStart) + det.placeholder;
    last = end;
  }
  return out === '' ? text : out + text.slice(last);
}

/** Compile [{name, regex, placeholder}] (as GET /v1/privacy lists them); a bad regex throws. */
export function compilePatterns(patterns) {
  return [...(patterns ?? [])].map((p, i) => {
    let regex;
    try {
      regex = new RegExp(p.regex, 'g');
    } catch (e) {
      throw new Error(`expd: redactPatterns[${i}].regex: ${e.message}`);
    }
    return { regex, placeholder: p.placeholder || DEFAULT_PLACEHOLDER, compiled: true };
  });
}

function custom(text, p) {
  // A function, not a replacement string: the placeholder is verbatim.
  return text.replace(p.regex, (m) => (m === '' ? m : p.placeholder));
}

/**
 * text with the built-in detectors' matches (emails, phone numbers, card
 * numbers, IBANs, IP addresses, keys and tokens) replaced by typed
 * placeholders such as [EMAIL]; patterns (custom {name, regex, placeholder},
 * or compiled ones) run first, in order.
 */
export function redact(text, patterns) {
  for (const p of patterns ?? []) text = custom(text, p.compiled ? p : compilePatterns([p])[0]);
  for (const det of BUILTINS) text = apply(text, det);
  return text;
}

/**
 * The client's redactor, or null when off: the built-ins and patterns,
 * then the caller's function when `option` is one (it sees the redacted
 * text and can remove more; if it throws or returns a non-string, the text
 * is sent as [REDACTED]).
 */
export function redactor(option, patterns, logger) {
  const hook = typeof option === 'function' ? option : null;
  if (hook === null && !option && !(patterns && [...patterns].length > 0)) return null;
  const compiled = compilePatterns(patterns);
  return (text) => {
    text = redact(text, compiled);
    if (hook === null) return text;
    let out;
    try {
      out = hook(text);
    } catch (e) {
      logger.error(`expd: the redact hook threw (${e}); the text is sent as ${DEFAULT_PLACEHOLDER}`);
      return DEFAULT_PLACEHOLDER;
    }
    if (typeof out !== 'string') {
      logger.error(`expd: the redact hook returned ${typeof out}, not a string; the text is sent as ${DEFAULT_PLACEHOLDER}`);
      return DEFAULT_PLACEHOLDER;
    }
    return out;
  };
}
