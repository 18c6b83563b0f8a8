// Package verdict turns one results run into one recommendation: ship a
// variant, keep running, or stop, with the reasons and, per treatment
// arm, how each primary metric, guardrail and non-inferiority margin
// read (docs/results.md, "Verdict"). Decide and Judge are pure; OfRun
// loads what Decide needs for a stored run.
package verdict
