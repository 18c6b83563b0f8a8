import { utcDay } from './events.js';

/**
 * Remembers which exposures this process already queued: one per
 * (experiment, user, variant, UTC day), so the traffic timeline counts every
 * active day of a long-running process. Bounded LRU: an evicted key may be
 * sent again, which costs one event, never a wrong attribution.
 */
export class ExposureLog {
  constructor(capacity) {
    if (!(capacity >= 1)) throw new RangeError(`exposure cache capacity must be positive, got ${capacity}`);
    this.capacity = capacity;
    this.seen = new Map();
  }

  /** True the first time (experimentId, userId, variant) is seen on the UTC day of nowMs. */
  firstTime(experimentId, userId, variant, nowMs = Date.now()) {
    const key = `${utcDay(nowMs)}\u0000${experimentId}\u0000${variant}\u0000${userId}`;
    const seen = this.seen;
    if (seen.has(key)) {
      // Refresh recency: delete and re-insert moves it to the end of the Map's order.
      seen.delete(key);
      seen.set(key, true);
      return false;
    }
    seen.set(key, true);
    if (seen.size > this.capacity) seen.delete(seen.keys().next().value);
    return true;
  }

  get size() {
    return this.seen.size;
  }
}
