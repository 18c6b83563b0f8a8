// Package vocab is the one vocabulary of events and metrics: the record
// types clients send, the fields of a model call, and the metric kinds,
// each kind one entry saying how it is validated, how its per-user value
// is aggregated and how it is compared. It sits at the bottom of the
// import graph (it imports only stats, for test names); validation,
// ingest, the metric catalogue and the results pipeline all read these
// tables, so a new kind or model-call field starts and mostly ends here
// (docs/architecture.md, "Where a change goes").
package vocab
