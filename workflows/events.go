package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/webhooks"
)

// announce sends one event from a workflow; key names the occurrence
// (webhooks.NewEvent: the same key gives the same id, so a retried or
// repeated announcement is one delivery, the id being the webhook-id
// receivers deduplicate on). A failed announcement is logged, never fails
// the workflow: the action it reports has happened.
func announce(ctx workflow.Context, orgID, experimentID, typ string, data any, key ...string) {
	ev, err := webhooks.NewEvent(orgID, experimentID, typ, workflow.Now(ctx), data, key...)
	announceEvent(ctx, ev, err)
}

// announceEvent announces an event built by one of the builders the
// outbox shares (webhooks.NewEvent, webhooks.LifecycleEvent,
// guardrails.Breach.Event, ...), so the workflow and the outbox name an
// occurrence alike. A build or announcement error is logged.
func announceEvent(ctx workflow.Context, ev webhooks.Event, err error) {
	if err == nil {
		err = Announce(ctx, ev)
	}
	if err != nil {
		workflow.GetLogger(ctx).Error("announce", "type", ev.Type, "event_id", ev.ID, "error", err)
	}
}

// LifecycleEventData is the data of experiment.started|stopped|shipped.
type LifecycleEventData = webhooks.LifecycleData
