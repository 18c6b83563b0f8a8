import { BucketMap, Sticky, bucketOfDigest, digestOf } from './bucketing.js';
import { BUCKETED, HOLDOUT, LAYER, NOT_TARGETED, PINNED, closedBy, decision } from './decision.js';
import { ConditionError, compileCondition } from './targeting.js';

/** The config body does not have the shape of the wire contract. */
export class ConfigError extends Error {}

let generations = 0;

/** A range of a layer's or a holdout's own bucket space: the user is in it when start <= bucket < end. */
class Slot {
  constructor(raw) {
    this.bucketCount = Number(raw.bucket_count);
    this.start = Number(raw.start ?? 0);
    this.end = Number(raw.end);
    if (!Number.isInteger(this.bucketCount) || this.bucketCount <= 0 || !Number.isInteger(this.start) ||
        !Number.isInteger(this.end) || this.start > this.end) {
      throw new Error(`slot ${raw.id}: bucket_count must be a positive integer and start <= end`);
    }
    this.id = raw.id;
    this.prefix = `${raw.id}.${raw.salt}.`;
  }

  holds(userId) {
    const b = bucketOfDigest(digestOf(this.prefix, userId), this.bucketCount);
    return this.start <= b && b < this.end;
  }
}

/** One experiment as GET /v1/config serves it, ready for local assignment. */
export class Experiment {
  constructor(raw) {
    try {
      this.id = String(raw.id);
      this.name = String(raw.name);
      this.salt = String(raw.salt);
      this.bucketCount = Number(raw.bucket_count);
      this.bucketMap = new BucketMap(raw.bucket_map);
      this.sticky = raw.sticky ? new Sticky(raw.sticky) : null;
      this.holdouts = (raw.holdouts ?? []).map((h) => new Slot(h));
      this.layer = raw.layer ? new Slot(raw.layer) : null;
    } catch (err) {
      throw new ConfigError(`experiment ${raw?.name ?? raw?.id}: ${err.message}`);
    }
    if (!Number.isInteger(this.bucketCount) || this.bucketCount <= 0) {
      throw new ConfigError(`experiment ${this.name}: bucket_count must be a positive integer`);
    }
    if (this.sticky?.empty) this.sticky = null;
    this.closed = closedBy(raw.status);
    this.version = raw.version ?? null;
    this.control = raw.control ?? raw.allocation?.[0]?.variant ?? null;
    // Control outside the experiment, by reason: made once, as decisions are frozen.
    this.outsideDecisions = this.control === null ? null : Object.fromEntries(
      [HOLDOUT, LAYER, NOT_TARGETED].map((reason) => [reason, decision(this.control, false, reason)]));
    this.variants = raw.variants ?? {};
    this.targeting = null;
    if (raw.targeting !== undefined && raw.targeting !== null) {
      try {
        this.targeting = compileCondition(raw.targeting);
      } catch (err) {
        if (!(err instanceof ConditionError)) throw err;
        // The server refuses invalid conditions; one that does not compile here matches no one.
        this.targeting = () => false;
      }
    }
    // The id+salt prefix is the same for every user.
    this.prefix = `${this.id}.${this.salt}.`;
    // This parse: assignments the exposure log caches are valid for it only.
    this.gen = ++generations;
  }

  /** The user's decision (lifecycle, holdouts, layer, targeting, sticky filters, bucket map); null if the map leaves the bucket unowned. */
  decide(userId, attributes = null) {
    return this.decideFrom(this.facts(userId), attributes);
  }

  /**
   * What the user's decision owes to hashing alone: fixed for this parse whatever the attributes,
   * so the exposure log keeps them and a warm targeted decision only evaluates the condition again.
   */
  facts(userId) {
    const d = digestOf(this.prefix, userId);
    const mapped = this.bucketMap.variantFor(bucketOfDigest(d, this.bucketCount));
    if (mapped === null) return { mapped };
    if (this.closed !== null) return { mapped, inside: decision(mapped, false, this.closed) };
    const kept = this.sticky === null ? mapped : this.sticky.resolve(d, mapped);
    const assigned = this.sticky?.wasAssigned(d) ?? false;
    return {
      mapped,
      // The decision unless the holdout, layer or targeting keeps the user out, made once (it is frozen).
      inside: decision(kept, true, kept === mapped ? BUCKETED : PINNED),
      assigned,
      // Per holdout, whether it holds the user out; null when the holdout step is not evaluated.
      held: this.holdouts.length > 0 && !assigned ? this.holdouts.map((h) => h.holds(userId)) : null,
      outside: this.layer !== null && !this.layer.holds(userId),
    };
  }

  /** The rules in order, applied to the user's facts and attributes. */
  decideFrom(f, attributes) {
    if (f.mapped === null) return null;
    if (this.closed !== null) return f.inside;
    let outside = null;
    if (f.held?.includes(true)) outside = HOLDOUT; // held is null for an assigned user
    else if (f.outside) outside = LAYER; // ranges never move: an assigned user is inside
    else if (this.targeting !== null && !f.assigned && !this.targeting(attributes ?? {})) outside = NOT_TARGETED;
    if (outside === null) return f.inside;
    return this.control === null ? decision(f.mapped, false, outside) : this.outsideDecisions[outside];
  }

  /** The variant's prompt text, or null. */
  promptOf(variant) {
    const prompt = this.variants[variant]?.prompt;
    return typeof prompt === 'string' ? prompt : null;
  }

  /** The variant's custom variables (an empty object when none). */
  variablesOf(variant) {
    const vars = this.variants[variant]?.variables;
    return vars !== null && typeof vars === 'object' && !Array.isArray(vars) ? vars : {};
  }
}

/** One org config version: experiments by id or name (ids win). */
export class ConfigSnapshot {
  constructor(version, experiments, etag) {
    this.version = version;
    this.etag = etag;
    this.byKey = new Map();
    for (const e of experiments) this.byKey.set(e.name, e);
    for (const e of experiments) this.byKey.set(e.id, e);
  }

  static parse(body, etag) {
    const version = body?.config_version;
    if (!Number.isInteger(version)) throw new ConfigError('config body: config_version missing');
    const list = Array.isArray(body.experiments) ? body.experiments : [];
    return new ConfigSnapshot(version, list.map((raw) => new Experiment(raw)), etag ?? null);
  }

  find(experiment) {
    return this.byKey.get(experiment) ?? null;
  }
}
