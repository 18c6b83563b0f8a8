// Package webhooks owns expd's outbound webhooks (tables
// webhook_endpoints and webhook_deliveries): the events expd announces to
// an org's subscribers, the endpoints an org registers, and the record of
// every delivery attempt. Deliveries are signed with the Standard Webhooks
// scheme (the svix library) and sent by the DeliverEvent workflow
// (workflows/deliver_event.go); docs/webhooks.md.
package webhooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// Event types expd announces.
const (
	EventExperimentStarted = "experiment.started"
	EventExperimentStopped = "experiment.stopped"
	EventExperimentShipped = "experiment.shipped"
	EventGuardrailBreached = "guardrail.breached"
	EventSRMFailed         = "srm.failed"
	EventResultsReady      = "results.ready"
)

// EventTypes lists every event type, in the order docs/webhooks.md shows.
var EventTypes = []string{EventExperimentStarted, EventExperimentStopped, EventExperimentShipped,
	EventGuardrailBreached, EventSRMFailed, EventResultsReady}

// KnownType tells whether t is one of EventTypes.
func KnownType(t string) bool { return slices.Contains(EventTypes, t) }

// Event is one announcement. ID is chosen by the caller and stays the same
// across retries and duplicate announcements: it is the delivery's
// webhook-id header (subscribers deduplicate on it) and names the workflow
// that delivers it (workflows.DeliverEventID), so announcing an event twice
// delivers it once. Data is the event's payload as subscribers see it; it
// is kept in the workflow history, so it must hold no secret.
type Event struct {
	ID           string
	OrgID        string
	Type         string
	ExperimentID string
	OccurredAt   time.Time
	Data         json.RawMessage
}

// LifecycleEventType is the event announcing that an experiment entered
// status ("" for a status nothing announces).
func LifecycleEventType(status string) string {
	switch status {
	case "running":
		return EventExperimentStarted
	case "stopped":
		return EventExperimentStopped
	case "shipped":
		return EventExperimentShipped
	}
	return ""
}

// LifecycleData is the data of experiment.started|stopped|shipped.
type LifecycleData struct {
	Status         string `json:"status"`
	Version        int    `json:"version"`
	Reason         string `json:"reason,omitempty"`
	ShippedVariant string `json:"shipped_variant,omitempty"`
	Actor          string `json:"actor"`
	WorkflowID     string `json:"workflow_id,omitempty"`
}

// LifecycleEvent is the event announcing that an experiment entered a
// status at a version. A version is minted by exactly one change, so its
// id is (type, experiment, version) whichever path announces it; ok is
// false for a status nothing announces.
func LifecycleEvent(orgID, experimentID string, at time.Time, d LifecycleData) (ev Event, ok bool, err error) {
	typ := LifecycleEventType(d.Status)
	if typ == "" {
		return Event{}, false, nil
	}
	ev, err = NewEvent(orgID, experimentID, typ, at, d, experimentID, strconv.Itoa(d.Version))
	return ev, err == nil, err
}

// EventID derives a stable event id from a key that names the occurrence
// (e.g. "guardrail.breached/<experiment>/<run>/<metric>"):
// "evt_" + the first 32 hex digits of its SHA-256.
func EventID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "evt_" + hex.EncodeToString(sum[:16])
}
