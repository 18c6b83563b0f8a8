package workflows

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/outbound"
)

// eventKey is the key naming an occurrence (outbound.EventID hashes it):
// the same key gives the same id, so a retried or repeated announcement is
// one delivery (the id is the webhook-id receivers deduplicate on).
func eventKey(parts ...string) string { return strings.Join(parts, "/") }

// announce sends one event from a workflow. A failed announcement is
// logged, never fails the workflow: the action it reports has happened.
func announce(ctx workflow.Context, orgID, experimentID, typ string, data any, key ...string) {
	b, err := json.Marshal(data)
	if err != nil {
		workflow.GetLogger(ctx).Error("encode event", "type", typ, "error", err)
		return
	}
	ev := outbound.Event{ID: outbound.EventID(eventKey(append([]string{typ}, key...)...)), OrgID: orgID, Type: typ, ExperimentID: experimentID,
		OccurredAt: workflow.Now(ctx).UTC().Truncate(time.Millisecond), Data: b}
	if err := Announce(ctx, ev); err != nil {
		workflow.GetLogger(ctx).Error("announce", "type", typ, "event_id", ev.ID, "error", err)
	}
}

// lifecycleEventType is the event announcing that an experiment entered status.
func lifecycleEventType(status string) string {
	switch status {
	case "running":
		return outbound.EventExperimentStarted
	case "stopped":
		return outbound.EventExperimentStopped
	case "shipped":
		return outbound.EventExperimentShipped
	}
	return ""
}

// LifecycleEventData is the data of experiment.started|stopped|shipped.
type LifecycleEventData struct {
	Status         string `json:"status"`
	Version        int    `json:"version"`
	Reason         string `json:"reason,omitempty"`
	ShippedVariant string `json:"shipped_variant,omitempty"`
	Actor          string `json:"actor"`
	WorkflowID     string `json:"workflow_id,omitempty"`
}

func itoa(n int) string { return strconv.Itoa(n) }
