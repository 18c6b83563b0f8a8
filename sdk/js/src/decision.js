// One user's assignment in one experiment, decided as POST /v1/assign decides
// it (bucketing/doc.go of the repository, "Decision"): the lifecycle, then the
// holdouts, the layer and the targeting (control, outside the experiment, for a
// user a holdout holds out, whose layer bucket lies outside the experiment's
// range, or who does not match; holdouts and targeting not for a user the
// assigned filter holds), then the sticky filters, then the bucket map.

/** Reason codes. */
export const NOT_RUNNING = 'not_running'; // draft, scheduled or stopped: control for everyone
export const SHIPPED = 'shipped'; // the shipped variant for everyone
export const HOLDOUT = 'holdout'; // held out of every experiment in scope: control, outside the experiment
export const LAYER = 'layer'; // outside the experiment's range of its layer: control, outside the experiment
export const NOT_TARGETED = 'not_targeted'; // the targeting condition does not match: control, outside the experiment
export const PINNED = 'pinned'; // the sticky filters keep the user off their bucket's variant
export const BUCKETED = 'bucketed'; // the bucket map's variant

/** The reason code of a status in which everyone gets one variant; null while running (or without a status). */
export function closedBy(status) {
  if (status === undefined || status === null || status === 'running') return null;
  return status === 'shipped' ? SHIPPED : NOT_RUNNING;
}

/** A decision: {variant, inExperiment, reasonCode}, frozen because the exposure log shares it. */
export function decision(variant, inExperiment, reasonCode) {
  return Object.freeze({ variant, inExperiment, reasonCode });
}

/** Whether the decision keeps the user out of the running experiment (no exposure, no model_call). */
export function outside(d) {
  return d !== null && (d.reasonCode === NOT_TARGETED || d.reasonCode === HOLDOUT || d.reasonCode === LAYER);
}
