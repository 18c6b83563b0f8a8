import { sha256 } from './sha256.js';

// Deterministic bucketing, identical to the server's (bucketing/doc.go in the
// expd repository): digest = SHA-256(experiment_id + "." + salt + "." +
// user_id); bucket = first 8 bytes big-endian mod bucket_count; the variant
// is the bucket-map range holding the bucket, unless the config's sticky
// filters keep the user on the variant it was pinned to before a weight change.

const TWO_POW_32 = 0x100000000;

/** The digest of a user in an experiment. */
export function digestOf(prefix, userId) {
  return sha256(prefix + userId);
}

/** The bucket of a digest: its first 8 bytes, big-endian, mod bucketCount (bucketCount <= 1,000,000). */
export function bucketOfDigest(d, bucketCount) {
  const hi = ((d[0] << 24) | (d[1] << 16) | (d[2] << 8) | d[3]) >>> 0;
  const lo = ((d[4] << 24) | (d[5] << 16) | (d[6] << 8) | d[7]) >>> 0;
  // (hi * 2^32 + lo) mod n without BigInt: every product stays below 2^53.
  return ((hi % bucketCount) * (TWO_POW_32 % bucketCount) + lo) % bucketCount;
}

/** The user's bucket in [0, bucketCount). */
export function bucketOf(experimentId, salt, bucketCount, userId) {
  return bucketOfDigest(sha256(`${experimentId}.${salt}.${userId}`), bucketCount);
}

/** A bucket map: which variant owns a bucket, by binary search over range starts. */
export class BucketMap {
  constructor(ranges) {
    const sorted = ranges.map((r) => [Number(r.start), Number(r.end), String(r.variant)]).sort((a, b) => a[0] - b[0]);
    this.starts = sorted.map((r) => r[0]);
    this.ends = sorted.map((r) => r[1]);
    this.variants = sorted.map((r) => r[2]);
  }

  /** The variant whose range holds bucket, or null. */
  variantFor(bucket) {
    const starts = this.starts;
    let lo = 0, hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (starts[mid] <= bucket) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0 || bucket >= this.ends[lo - 1]) return null;
    return this.variants[lo - 1];
  }
}

function base64Bytes(text) {
  if (typeof Buffer !== 'undefined') return new Uint8Array(Buffer.from(text, 'base64'));
  const raw = atob(text);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

function hex(d, from, to) {
  let s = '';
  for (let i = from; i < to; i++) s += (d[i] < 16 ? '0' : '') + d[i].toString(16);
  return s;
}

/**
 * The sticky part of an experiment's config: Bloom filters of users pinned to
 * a variant other than the one the current map gives them, plus exact
 * exceptions for pinned users a filter would misplace. Rules: bucketing/doc.go.
 */
export class Sticky {
  constructor(raw) {
    this.filters = (raw?.filters ?? []).map(bloom);
    this.exceptions = new Map(Object.entries(raw?.exceptions ?? {}));
    // Every pinned user of a targeted experiment: they stay in when the targeting changes.
    this.assigned = raw?.assigned ? bloom(raw.assigned) : null;
  }

  get empty() {
    return this.filters.length === 0 && this.exceptions.size === 0 && this.assigned === null;
  }

  /** Whether the assigned filter holds the user with digest d. */
  wasAssigned(d) {
    return this.assigned !== null && holds(this.assigned, d);
  }

  /** The variant a user with digest d keeps, given the map's answer mapped. */
  resolve(d, mapped) {
    if (this.exceptions.size > 0) {
      const kept = this.exceptions.get(hex(d, 8, 16));
      if (kept !== undefined) return kept;
    }
    for (const f of this.filters) {
      if (f.variant !== mapped && holds(f, d)) return f.variant;
    }
    return mapped;
  }
}

function bloom(f) {
  const out = { variant: String(f.variant ?? ''), bits: Number(f.bits), hashes: Number(f.hashes), data: base64Bytes(String(f.data)) };
  if (!(out.bits > 0) || !(out.hashes > 0) || out.data.length * 8 < out.bits) throw new Error(`sticky filter of ${out.variant}: bad size`);
  return out;
}

function holds(f, d) {
  const h1 = ((d[8] << 24) | (d[9] << 16) | (d[10] << 8) | d[11]) >>> 0;
  const h2 = (((d[12] << 24) | (d[13] << 16) | (d[14] << 8) | d[15]) | 1) >>> 0;
  for (let i = 0; i < f.hashes; i++) {
    const bit = (h1 + i * h2) % f.bits;
    if ((f.data[bit >>> 3] & (1 << (bit & 7))) === 0) return false;
  }
  return true;
}
