/**
 * Remembers, per (experiment, user), the variant computed on the current
 * config and the UTC day of its last exposure, so that an exposure is queued
 * once per (experiment, user, variant, UTC day) (the traffic timeline counts
 * every active day of a long-running process) and a warm assign() is two Map
 * lookups with no hashing until the config changes. A user whose variant
 * changes and changes back within a day gets one more exposure (only the
 * latest variant is kept). Bounded: past capacity the oldest-inserted pair
 * goes (a hit does not refresh it); a forgotten pair may be sent again, which
 * costs one event, never a wrong attribution.
 */
export class ExposureLog {
  constructor(capacity) {
    if (!(capacity >= 1)) throw new RangeError(`exposure cache capacity must be positive, got ${capacity}`);
    this.capacity = capacity;
    this.byExperiment = new Map(); // experiment id -> Map(user id -> {gen, variant, day})
    this.ringExperiments = []; // insertion order, for eviction
    this.ringUsers = [];
    this.head = 0;
    this.count = 0;
    this.due = false; // set by assign(): an exposure is due
  }

  /**
   * The user's variant in experiment (null: its bucket is in no range), and
   * in this.due whether an exposure is due: the first time the (experiment,
   * user, variant) is seen on day, or always (a model call's, which also
   * counts as the day's). experiment is an Experiment (id, gen, variantFor).
   */
  assign(experiment, userId, day, always) {
    let users = this.byExperiment.get(experiment.id);
    if (users === undefined) {
      users = new Map();
      this.byExperiment.set(experiment.id, users);
    }
    const entry = users.get(userId);
    if (entry !== undefined && entry.gen === experiment.gen) {
      if (entry.variant !== null && entry.day !== day) {
        entry.day = day;
        always = true;
      }
      this.due = entry.variant !== null && always;
      return entry.variant;
    }
    const variant = experiment.variantFor(userId);
    const due = variant !== null && (always || entry === undefined || entry.variant !== variant || entry.day !== day);
    if (entry === undefined) {
      users.set(userId, { gen: experiment.gen, variant, day: due ? day : -1 });
      this.admit(experiment.id, userId);
    } else {
      entry.gen = experiment.gen;
      entry.variant = variant;
      if (due) entry.day = day;
    }
    this.due = due;
    return variant;
  }

  admit(experimentId, userId) {
    if (this.count < this.capacity) {
      this.ringExperiments.push(experimentId);
      this.ringUsers.push(userId);
      this.count++;
      return;
    }
    this.byExperiment.get(this.ringExperiments[this.head])?.delete(this.ringUsers[this.head]);
    this.ringExperiments[this.head] = experimentId;
    this.ringUsers[this.head] = userId;
    this.head = (this.head + 1) % this.capacity;
  }

  get size() {
    return this.count;
  }
}
