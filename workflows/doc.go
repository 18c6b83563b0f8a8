// Package workflows holds expd's Temporal workflows: deterministic code
// only (no clock, no random, no I/O), calling activities by method
// reference. One file per workflow, its input and result beside it; every
// workflow id is built in ids.go.
package workflows

import "github.com/expd/expd/activities"

// a is the nil receiver through which workflows name activities; Temporal
// resolves the method by name on the worker's registered Activities.
var a *activities.Activities
