package workflows

// Workflow ids are meaningful so that Temporal refuses a duplicate start
// (and the database refuses duplicate rows): the same job always gets the
// same id. Every id is built here.

// KeyRotationID is the one rotation of an org's key scope that may run at a
// time: keys/<org>/<scope>.
func KeyRotationID(orgID, scope string) string {
	return "keys/" + orgID + "/" + scope
}

// ResultsWorkflowID is the one run of an experiment's results for a
// computed_for value (a UTC day YYYY-MM-DD, or manual-<RFC 3339 instant>):
// results/<experiment>/<computed_for>.
func ResultsWorkflowID(experimentID, computedFor string) string {
	return "results/" + experimentID + "/" + computedFor
}

// HoldoutResultsWorkflowID is the one run of a holdout's results for a
// computed_for value: results/holdout-<holdout>/<computed_for>.
func HoldoutResultsWorkflowID(holdoutID, computedFor string) string {
	return "results/holdout-" + holdoutID + "/" + computedFor
}

// BackfillWorkflowID is the one backfill of an org's day range:
// backfill/<org>/<first day>/<last day>.
func BackfillWorkflowID(orgID, firstDay, lastDay string) string {
	return "backfill/" + orgID + "/" + firstDay + "/" + lastDay
}

// DailyResultsWorkflowID prefixes the daily schedule's workflows (the
// schedule appends the scheduled time): daily-results.
const DailyResultsWorkflowID = "daily-results"

// RetentionWorkflowID prefixes the retention schedule's workflows.
const RetentionWorkflowID = "retention"

// DailyResultsScheduleID and RetentionScheduleID name the schedules of a
// task queue, so two deployments on one namespace keep their own.
func DailyResultsScheduleID(taskQueue string) string { return taskQueue + "/daily-results" }

// RetentionScheduleID names the retention schedule of a task queue.
func RetentionScheduleID(taskQueue string) string { return taskQueue + "/retention" }

// IdentitySyncID is the one sync of an identity-provider webhook message:
// identity/<svix-id>. Redeliveries share the svix-id and are refused.
func IdentitySyncID(svixID string) string { return "identity/" + svixID }

// PaymentEventID is the one application of a payment-provider event:
// stripe/<event id>.
func PaymentEventID(eventID string) string { return "stripe/" + eventID }

// DeliverEventID is the one delivery of an announced event to its org's
// subscribers: webhook/<event id>. Announcing the same event again finds
// the id taken and delivers nothing twice.
func DeliverEventID(eventID string) string { return "webhook/" + eventID }

// ExperimentWorkflowID is the one lifecycle workflow of an experiment:
// experiment/<id>. Routes reach it with SignalWithStart, so it exists
// exactly once whoever comes first.
func ExperimentWorkflowID(experimentID string) string { return "experiment/" + experimentID }

// GuardrailHealthWorkflowID prefixes the hourly guardrail health
// schedule's workflows.
const GuardrailHealthWorkflowID = "guardrail-health"

// GuardrailHealthScheduleID names the hourly health schedule of a task queue.
func GuardrailHealthScheduleID(taskQueue string) string { return taskQueue + "/guardrail-health" }

// EventPartitionsWorkflowID prefixes the partition maintenance schedule's
// workflows.
const EventPartitionsWorkflowID = "event-partitions"

// EventPartitionsScheduleID names the partition maintenance schedule of a
// task queue.
func EventPartitionsScheduleID(taskQueue string) string { return taskQueue + "/event-partitions" }

// RedriveWorkflowID prefixes the reconcile schedule's workflows.
const RedriveWorkflowID = "redrive"

// RedriveScheduleID names the reconcile schedule of a task queue.
func RedriveScheduleID(taskQueue string) string { return taskQueue + "/redrive" }

// EvaluatorID is the one workflow of an online evaluator:
// evaluator/<id>. Starting it again while it runs changes nothing.
func EvaluatorID(evaluatorID string) string { return "evaluator/" + evaluatorID }

// ErasureWorkflowID is the one running erasure of a user of an org:
// erasure/<org>/<user hash>, the hash keyed by the server key
// (erasure.UserHash), never the user id itself.
func ErasureWorkflowID(orgID, userHash string) string { return "erasure/" + orgID + "/" + userHash }
