import { HOLDOUT, outside } from './decision.js';

/** The variant of a holdout exposure of a user let through (held out: HOLDOUT). */
export const HOLDOUT_EXPOSED = 'exposed';
/** What a resolve owes the exposure stream. */
export const EXPOSE_NONE = 0; // track() filling a variant: no exposure
export const EXPOSE_DAILY = 1; // assign, getPrompt, getVariables: once per (experiment, user, variant, UTC day)
export const EXPOSE_ALWAYS = 2; // a model call: every call, and it counts as the day's

const NO_EXPOSURE_DAY = -1; // an entry whose variant has had no exposure yet

/**
 * Remembers, per (experiment, user), the variant computed on the current
 * config and the UTC day of its last exposure, so that an exposure is queued
 * once per (experiment, user, variant, UTC day) (the traffic timeline counts
 * every active day of a long-running process) and a warm assign() or a
 * track() without a variant is two Map lookups with no hashing until the
 * config changes. A user whose variant changes and changes back within a day
 * gets one more exposure (only the latest variant is kept). Bounded: past
 * capacity the oldest-inserted pair goes (a hit does not refresh it); a
 * forgotten pair may be sent again, which costs one event, never a wrong
 * attribution.
 */
export class ExposureLog {
  constructor(capacity) {
    if (!(capacity >= 1)) throw new RangeError(`exposure cache capacity must be positive, got ${capacity}`);
    this.capacity = capacity;
    this.byExperiment = new Map(); // experiment id -> Map(user id -> {gen, decision, day})
    this.ringExperiments = []; // insertion order, for eviction
    this.ringUsers = [];
    this.head = 0;
    this.count = 0;
    this.due = false; // set by resolve(): an exposure is due
    this.facts = undefined; // set by resolve(): the decision's facts
  }

  /**
   * The user's decision in experiment (null: its bucket is in no range), and
   * in this.due whether mode (EXPOSE_*) owes an exposure on day. experiment
   * is an Experiment (id, gen, decide, targeting). A user outside the
   * experiment (not targeted) owes none. A targeted experiment's decision
   * depends on attributes, so it is computed again, except for track
   * (EXPOSE_NONE), which has none and takes the last one.
   */
  resolve(experiment, userId, day, mode, attributes = null) {
    const targeted = experiment.targeting !== null && experiment.targeting !== undefined;
    let users = this.byExperiment.get(experiment.id);
    if (users === undefined) {
      users = new Map();
      this.byExperiment.set(experiment.id, users);
    }
    const entry = users.get(userId);
    if (entry !== undefined && entry.gen === experiment.gen && (!targeted || mode === EXPOSE_NONE)) {
      this.due = entry.decision !== null && !outside(entry.decision) && (mode === EXPOSE_ALWAYS || (mode === EXPOSE_DAILY && entry.day !== day));
      if (this.due) entry.day = day;
      this.facts = entry.facts;
      return entry.decision;
    }
    // A targeted experiment's warm decision evaluates the condition again on the kept facts (no hashing).
    let facts = entry !== undefined && entry.gen === experiment.gen ? entry.facts : undefined;
    if (facts === undefined && experiment.facts !== undefined) facts = experiment.facts(userId);
    const decision = facts === undefined ? experiment.decide(userId, attributes) : experiment.decideFrom(facts, attributes);
    if (entry !== undefined && entry.gen === experiment.gen && decision === entry.decision) {
      // Decided as last time (decisions are made once per user's facts): only the day's exposure can change.
      this.due = decision !== null && (mode === EXPOSE_ALWAYS || (mode === EXPOSE_DAILY && entry.day !== day)) && !outside(decision);
      if (this.due) entry.day = day;
      return decision;
    }
    // The day of the last exposure still counts while the variant stays.
    const kept = entry !== undefined && entry.decision !== null && decision !== null && entry.decision.variant === decision.variant;
    const due = decision !== null && !outside(decision) && (mode === EXPOSE_ALWAYS || (mode === EXPOSE_DAILY && !(kept && entry.day === day)));
    const nextDay = due ? day : kept ? entry.day : NO_EXPOSURE_DAY;
    if (entry === undefined) {
      users.set(userId, { gen: experiment.gen, decision, day: nextDay, facts });
      this.admit(experiment.id, userId);
    } else {
      entry.gen = experiment.gen;
      entry.decision = decision;
      entry.day = nextDay;
      entry.facts = facts;
    }
    this.due = due;
    this.facts = facts;
    return decision;
  }

  /**
   * The holdout exposures due for a decision in experiment whose facts are
   * facts (none unless it evaluated the holdout step): [holdout id, variant]
   * per holdout, once per (holdout, user, variant, UTC day) as an
   * experiment's exposure, whichever experiment of the holdout's scope
   * decided (docs/targeting.md, "Holdout exposures"). Kept in the same log,
   * keyed by the holdout's id.
   */
  holdoutsDue(experiment, userId, facts, day) {
    const held = facts?.held;
    if (held === null || held === undefined) return [];
    const due = [];
    experiment.holdouts.forEach((h, i) => {
      const variant = held[i] ? HOLDOUT : HOLDOUT_EXPOSED;
      let users = this.byExperiment.get(h.id);
      if (users === undefined) {
        users = new Map();
        this.byExperiment.set(h.id, users);
      }
      const entry = users.get(userId);
      if (entry !== undefined && entry.day === day && entry.decision.variant === variant) return;
      if (entry === undefined) {
        users.set(userId, { gen: 0, decision: { variant }, day });
        this.admit(h.id, userId);
      } else {
        entry.decision = { variant };
        entry.day = day;
      }
      due.push([h.id, variant]);
    });
    return due;
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
