import { utcDay } from './events.js';

/**
 * Remembers which exposures this process already queued: one per
 * (experiment, user, variant, UTC day), so the traffic timeline counts every
 * active day of a long-running process. Bounded: past capacity the oldest
 * entry goes (insertion order; a hit does not refresh it, which keeps the
 * hot path to one Map lookup). A forgotten key may be sent again, which
 * costs one event, never a wrong attribution.
 */
export class ExposureLog {
  constructor(capacity) {
    if (!(capacity >= 1)) throw new RangeError(`exposure cache capacity must be positive, got ${capacity}`);
    this.capacity = capacity;
    this.days = new Map(); // key -> UTC day of the last exposure queued
  }

  /** True the first time (experimentId, userId, variant) is seen on the UTC day of nowMs. */
  firstTime(experimentId, userId, variant, nowMs = Date.now()) {
    const key = `${experimentId}\u0000${variant}\u0000${userId}`;
    const day = utcDay(nowMs);
    const days = this.days;
    const last = days.get(key);
    if (last === day) return false;
    if (last !== undefined) days.delete(key);
    days.set(key, day);
    if (days.size > this.capacity) days.delete(days.keys().next().value);
    return true;
  }

  get size() {
    return this.days.size;
  }
}
