// Targeting conditions: who may enter an experiment (docs/targeting.md of the
// repository). GrowthBook's condition syntax with expd's semantics, identical
// to the server's targeting package and the other clients; the shared vectors
// (testdata/targeting/vectors.json) pin them down. Compiled once per config.

const MAX_DEPTH = 16;
const MAX_REGEX_LEN = 512;
const MAX_REPEAT = 1000;
const ESCAPES = 'dDwWnrt^$\\.*+?()[]{}|/';
const CLASS_ESCAPES = ESCAPES + '-';
const TYPES = ['string', 'number', 'boolean', 'array', 'object', 'null'];
const LOGICAL = ['$and', '$or', '$nor', '$not'];

/** The condition is not one the server accepts (it refuses it at save). */
export class ConditionError extends Error {}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const join = (at, key) => (at === '' ? key : `${at}.${key}`);
const allOf = (tests) => (tests.length === 1 ? tests[0] : (o) => {
  for (let i = 0; i < tests.length; i++) if (!tests[i](o)) return false;
  return true;
});

/** Compile a condition over an attributes object into a test; throws ConditionError if invalid. */
export function compileCondition(condition) {
  return cond(condition, '', 0);
}

function cond(v, at, depth) {
  if (!isObject(v)) throw new ConditionError(`${at}: must be an object of attribute paths and $and, $or, $nor, $not`);
  if (depth > MAX_DEPTH) throw new ConditionError(`${at}: nests deeper than ${MAX_DEPTH} levels`);
  const fields = []; // attribute paths: {key, rest, path, risky, test}
  const parts = []; // logical operators
  for (const k of Object.keys(v).sort()) {
    const val = v[k];
    const here = join(at, k);
    if (k === '$and' || k === '$or' || k === '$nor') {
      if (!Array.isArray(val) || val.length === 0) throw new ConditionError(`${here}: must be a non-empty array of conditions`);
      const subs = val.map((s, i) => cond(s, `${here}[${i}]`, depth + 1));
      if (k === '$and') parts.push((o) => subs.every((s) => s(o)));
      else if (k === '$or') parts.push((o) => subs.some((s) => s(o)));
      else parts.push((o) => !subs.some((s) => s(o)));
    } else if (k === '$not') {
      const sub = cond(val, here, depth + 1);
      parts.push((o) => !sub(o));
    } else if (k.startsWith('$')) {
      throw new ConditionError(`${here}: is not a logical operator`);
    } else {
      const path = k.split('.');
      if (path.includes('')) throw new ConditionError(`${here}: is not an attribute path`);
      // risky: a key Object.prototype has, which o[key] would read from it.
      fields.push({ key: path[0], rest: path.slice(1), path, risky: path[0] in Object.prototype, test: value(val, here, depth + 1) });
    }
  }
  if (fields.length === 0) return parts.length === 0 ? () => true : allOf(parts);
  const rest = allOf(parts);
  return (o) => {
    // An object whose prototype is Object.prototype (or null) has only its own keys but the risky ones:
    // o[key] is the own-key lookup without asking hasOwnProperty, checked once per object.
    const own = isObject(o) && plainPrototype(o);
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i];
      let a;
      if (!own || f.risky) a = lookup(o, f.path);
      else if (f.rest.length === 0) a = o[f.key] ?? null;
      else a = lookup(o[f.key], f.rest);
      if (!f.test(a)) return false;
    }
    return parts.length === 0 || rest(o);
  };
}

function plainPrototype(o) {
  const p = Object.getPrototypeOf(o);
  return p === Object.prototype || p === null;
}

const hasOperator = (obj) => Object.keys(obj).some((k) => k.startsWith('$'));

function value(v, at, depth) {
  if (!isObject(v) || !hasOperator(v)) return equalTo(v);
  if (depth > MAX_DEPTH) throw new ConditionError(`${at}: nests deeper than ${MAX_DEPTH} levels`);
  const parts = Object.keys(v).sort().map((op) => {
    if (!op.startsWith('$')) throw new ConditionError(`${join(at, op)}: cannot be mixed with operators`);
    return operator(op, v[op], join(at, op), depth);
  });
  return allOf(parts);
}

const ORDER = {
  $lt: (r) => r < 0, $lte: (r) => r <= 0, $gt: (r) => r > 0, $gte: (r) => r >= 0,
};

function operator(op, arg, at, depth) {
  switch (op) {
    case '$eq': return equalTo(arg);
    case '$ne': {
      const eq = equalTo(arg);
      return (a) => !eq(a);
    }
    case '$lt': case '$lte': case '$gt': case '$gte': {
      if (typeof arg === 'number') {
        // NaN (not JSON, but a caller's value) orders with nothing: every comparison is false.
        switch (op) {
          case '$lt': return (a) => typeof a === 'number' && a < arg;
          case '$lte': return (a) => typeof a === 'number' && a <= arg;
          case '$gt': return (a) => typeof a === 'number' && a > arg;
          default: return (a) => typeof a === 'number' && a >= arg;
        }
      }
      if (typeof arg !== 'string') throw new ConditionError(`${at}: must be a number or a string`);
      const ok = ORDER[op];
      const cmp = stringOrder(arg);
      return (a) => typeof a === 'string' && ok(cmp(a, arg));
    }
    case '$in': case '$nin': {
      if (!Array.isArray(arg)) throw new ConditionError(`${at}: must be an array`);
      const listed = listTest(arg);
      const isIn = (a) => (Array.isArray(a) ? a.some(listed) : listed(a));
      return op === '$in' ? isIn : (a) => !isIn(a);
    }
    case '$all': {
      if (!Array.isArray(arg)) throw new ConditionError(`${at}: must be an array`);
      const subs = arg.map((s, i) => value(s, `${at}[${i}]`, depth + 1));
      return (a) => Array.isArray(a) && subs.every((s) => a.some(s));
    }
    case '$size': {
      const sub = value(arg, at, depth + 1);
      return (a) => Array.isArray(a) && sub(a.length);
    }
    case '$elemMatch': {
      const sub = isObject(arg) && hasOperator(arg) && !LOGICAL.some((k) => k in arg)
        ? value(arg, at, depth + 1) : cond(arg, at, depth + 1);
      return (a) => Array.isArray(a) && a.some(sub);
    }
    case '$exists':
      if (typeof arg !== 'boolean') throw new ConditionError(`${at}: must be true or false`);
      return (a) => (a !== null && a !== undefined) === arg;
    case '$type':
      if (!TYPES.includes(arg)) throw new ConditionError(`${at}: must be one of ${TYPES.join(', ')}`);
      return (a) => typeOf(a) === arg;
    case '$regex': {
      if (typeof arg !== 'string') throw new ConditionError(`${at}: must be a string`);
      let re;
      try {
        re = compileRegex(arg);
      } catch (err) {
        throw new ConditionError(`${at}: ${err.message}`);
      }
      return (a) => typeof a === 'string' && re.test(a);
    }
    case '$not': {
      const sub = value(arg, at, depth + 1);
      return (a) => !sub(a);
    }
    case '$veq': case '$vne': case '$vlt': case '$vlte': case '$vgt': case '$vgte': {
      if (typeof arg !== 'string') throw new ConditionError(`${at}: must be a version string`);
      const want = paddedVersion(arg);
      const eq = op === '$veq';
      const test = op === '$veq' || op === '$vne' ? (r) => (r === 0) === eq : ORDER[`$${op.slice(2)}`];
      const cmp = stringOrder(want);
      return (a) => typeof a === 'string' && test(cmp(paddedVersionMemo(a), want));
    }
    default:
      throw new ConditionError(`${at}: is not a supported operator`);
  }
}

/** The value of object o's own key (null if none): one step of lookup. */
function field(o, key) {
  const v = Object.prototype.hasOwnProperty.call(o, key) ? o[key] : undefined;
  return v === undefined ? null : v;
}

function lookup(o, path) {
  for (let k = 0; k < path.length; k++) {
    const part = path[k];
    if (Array.isArray(o)) {
      const i = arrayIndex(part);
      if (i === null || i >= o.length) return null;
      o = o[i];
    } else if (isObject(o)) {
      o = field(o, part);
    } else {
      return null;
    }
  }
  return o === undefined ? null : o;
}

function arrayIndex(s) {
  if (s === '' || s.length > 9 || (s.length > 1 && s[0] === '0') || !/^[0-9]+$/.test(s)) return null;
  return Number(s);
}

/** The test "equals v", specialised by v's type once per compile. */
function equalTo(v) {
  if (v === null || v === undefined) return (a) => a === null || a === undefined;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return (a) => a === v;
  return (a) => jsonEqual(a, v);
}

/** The test "equals one of list" of $in and $nin: scalars in a Set, arrays and objects by deep equality. */
function listTest(list) {
  const scalars = new Set();
  const composites = [];
  let hasNull = false;
  for (const l of list) {
    if (l === null || l === undefined) hasNull = true;
    else if (typeof l === 'object') composites.push(l);
    else scalars.add(l);
  }
  return (e) => {
    if (e === null || e === undefined) return hasNull;
    if (typeof e !== 'object') return scalars.has(e) && e === e; // NaN equals nothing
    return composites.some((l) => jsonEqual(e, l));
  };
}

function typeOf(v) {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  const t = typeof v;
  return ['string', 'number', 'boolean', 'object'].includes(t) ? t : 'unknown';
}

/** Deep equality of JSON values, with no conversion between types. */
export function jsonEqual(a, b) {
  if (a === undefined) a = null;
  if (b === undefined) b = null;
  if (a === null || b === null) return a === b;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]));
  }
  return typeof a === typeof b && a === b;
}

/** Order strings by code points (JavaScript's < compares UTF-16 units). */
function compareStrings(s, t) {
  if (s === t) return 0;
  const n = Math.min(s.length, t.length);
  for (let i = 0; i < n; i++) {
    const x = s.codePointAt(i);
    const y = t.codePointAt(i);
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return s.length < t.length ? -1 : 1;
}

/**
 * The code point order for comparisons with the string t: JavaScript's own
 * (UTF-16 units) when t has no unit from 0xD800 up, since then the two
 * orders agree for any other string (at the first difference, a surrogate or
 * a unit from 0xE000 is above t's unit either way).
 */
function stringOrder(t) {
  for (let i = 0; i < t.length; i++) {
    if (t.charCodeAt(i) >= 0xd800) return compareStrings;
  }
  return (s, u) => (s === u ? 0 : s < u ? -1 : 1);
}

/** GrowthBook's paddedVersionString: comparable version strings (docs/targeting.md). */
export function paddedVersion(v) {
  if (v.startsWith('v')) v = v.slice(1);
  const plus = v.indexOf('+');
  if (plus >= 0) v = v.slice(0, plus);
  let out = '';
  let parts = 0;
  let start = 0;
  for (let i = 0; i <= v.length; i++) {
    const c = i < v.length ? v.charCodeAt(i) : -1;
    if (c !== -1 && c !== 46 /* . */ && c !== 45 /* - */) continue;
    const p = v.slice(start, i);
    if (parts > 0) out += '-';
    out += p.length > 0 && p.length < 5 && allDigits(p) ? ' '.repeat(5 - p.length) + p : p;
    parts++;
    start = i + 1;
  }
  return parts === 3 ? `${out}-~` : out;
}

function allDigits(s) {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

// Attribute versions repeat (an app has few versions live): their padded
// forms are remembered, up to MEMO_MAX, then forgotten all at once.
const MEMO_MAX = 1024;
const padded = new Map();
function paddedVersionMemo(v) {
  let p = padded.get(v);
  if (p === undefined) {
    if (padded.size >= MEMO_MAX) padded.clear();
    p = paddedVersion(v);
    padded.set(v, p);
  }
  return p;
}

/**
 * Check a $regex pattern against the subset every implementation evaluates
 * identically and compile it: code points (u), dotall (s), no other flags.
 */
export function compileRegex(pattern) {
  checkRegex(pattern);
  return new RegExp(pattern, 'su');
}

function checkRegex(p) {
  const rs = Array.from(p);
  if (rs.length > MAX_REGEX_LEN) throw new Error(`regex is longer than ${MAX_REGEX_LEN} characters`);
  let depth = 0;
  let repeatable = false;
  for (let i = 0; i < rs.length; i++) {
    const c = rs[i];
    if (c === '\\') {
      if (i + 1 === rs.length) throw new Error('regex ends with a lone backslash');
      i++;
      if (!ESCAPES.includes(rs[i])) throw new Error(`regex escape \\${rs[i]} is not supported`);
      repeatable = true;
    } else if (c === '(') {
      if (rs[i + 1] === '?') {
        if (rs[i + 2] !== ':') throw new Error('regex group (? is not supported: only ( ) and (?: )');
        i += 2;
      }
      depth++;
      repeatable = false;
    } else if (c === ')') {
      if (depth === 0) throw new Error('regex has an unbalanced )');
      depth--;
      repeatable = true;
    } else if (c === '|' || c === '^' || c === '$') {
      repeatable = false;
    } else if ('*+?{'.includes(c)) {
      if (!repeatable) throw new Error(`regex quantifier ${c} at character ${i + 1} has nothing to repeat`);
      if (c === '{') i = repeatCount(rs, i);
      if (rs[i + 1] === '?') i++;
      repeatable = false;
    } else if (c === '}' || c === ']') {
      throw new Error(`regex character ${c} must be escaped`);
    } else if (c === '[') {
      i = charClass(rs, i);
      repeatable = true;
    } else {
      repeatable = true;
    }
  }
  if (depth !== 0) throw new Error('regex has an unbalanced (');
}

function digits(rs, j) {
  const start = j;
  let n = 0;
  while (j < rs.length && rs[j] >= '0' && rs[j] <= '9' && j - start < 5) n = n * 10 + Number(rs[j++]);
  return [j > start ? n : null, j];
}

function repeatCount(rs, i) {
  const bad = new Error(`regex { at character ${i + 1} must start {n}, {n,} or {n,m} with n <= m <= ${MAX_REPEAT}`);
  let [n, j] = digits(rs, i + 1);
  if (n === null) throw bad;
  let m = n;
  if (rs[j] === ',') {
    j++;
    if (j < rs.length && rs[j] !== '}') {
      [m, j] = digits(rs, j);
      if (m === null || m < n) throw bad;
    }
  }
  if (rs[j] !== '}' || m > MAX_REPEAT) throw bad;
  return j;
}

const CLASS_ESCAPE_CHARS = { d: null, D: null, w: null, W: null, n: '\n', r: '\r', t: '\t' };

function charClass(rs, i) {
  let j = i + 1;
  if (rs[j] === '^') j++;
  if (rs[j] === ']') throw new Error(`regex class at character ${i + 1} is empty`);
  const atom = () => {
    const c = rs[j];
    if (c === '\\') {
      if (j + 1 === rs.length) throw new Error('regex ends with a lone backslash');
      const e = rs[j + 1];
      if (!CLASS_ESCAPES.includes(e)) throw new Error(`regex escape \\${e} is not supported in a class`);
      j += 2;
      return e in CLASS_ESCAPE_CHARS ? CLASS_ESCAPE_CHARS[e] : e;
    }
    if (c === '[') throw new Error('regex character [ inside a class must be escaped');
    if (c === '-') {
      if (rs[j + 1] === ']') {
        j++;
        return '-';
      }
      throw new Error('regex character - inside a class must be escaped unless it is last or makes a range');
    }
    j++;
    return c;
  };
  while (j < rs.length && rs[j] !== ']') {
    const lo = atom();
    if (j + 1 < rs.length && rs[j] === '-' && rs[j + 1] !== ']') {
      j++;
      const hi = atom();
      if (lo === null || hi === null || hi.codePointAt(0) < lo.codePointAt(0)) {
        throw new Error(`regex class range at character ${j} must go from a character to a greater one`);
      }
    }
  }
  if (j >= rs.length) throw new Error(`regex class at character ${i + 1} has no closing ]`);
  return j;
}
