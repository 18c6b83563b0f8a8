// Package stats is expd's statistics engine: two-sample tests with effects
// and CIs (Compare), relative lift, multiple-testing adjustment, the sample
// ratio mismatch gate, per-arm distributions and the deterministic sample
// cap. It is pure: no I/O, and it imports only the standard library and
// gonum. README.md beside this file documents every method's choices and
// how the results are checked against R.
package stats
