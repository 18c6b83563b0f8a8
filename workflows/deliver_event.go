package workflows

import (
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/webhooks"
)

// DeliveryRetryPolicy returns how long a subscriber may be down before an event
// is given up: 14 attempts over about 24 hours. The first retries come
// quickly for a blip (1, 2, 4, 8, 16, 32 min), then the gaps double to 4 h
// and stay there (64, 128, then 5 × 240 min): 13 gaps of 1,455 min in all,
// 24 h 15 min after the first attempt. A day covers an endpoint that is
// down overnight or across a bad deploy rolled back next morning, in line
// with the Standard Webhooks/Svix practice of retrying for about a day; a
// dead endpoint costs at most 14 requests per event, 6 of them in the
// last 20 hours. Every attempt is recorded (webhook_deliveries), so the
// give-up is visible at GET /v1/webhook-endpoints/{id}/deliveries.
func DeliveryRetryPolicy() temporal.RetryPolicy {
	return temporal.RetryPolicy{
		InitialInterval:    time.Minute,
		BackoffCoefficient: 2,
		MaximumInterval:    4 * time.Hour,
		MaximumAttempts:    14,
	}
}

// deliveryAttemptTimeout bounds one attempt: the request's own timeout
// (webhooks.RequestTimeout) plus reading the endpoint and recording.
const deliveryAttemptTimeout = 30 * time.Second

// DeliverEventInput is one event to deliver. Retry replaces
// DeliveryRetryPolicy (tests pass a short one); nil: the default.
type DeliverEventInput struct {
	Event webhooks.Event
	Retry *temporal.RetryPolicy
}

// DeliverEventResult says what became of the event at each subscriber.
type DeliverEventResult struct {
	Delivered []string // endpoint ids that answered 2xx
	Failed    []string // endpoint ids that never did within the retry budget
	Skipped   []string // endpoint ids deleted before delivery
}

// DeliverEvent delivers one event to every endpoint of its org subscribed
// to its type, each with its own retries (DeliveryRetryPolicy), in
// parallel. It runs under DeliverEventID (started by Announce). Only
// endpoint ids and the event pass through it: the activity reads each
// endpoint's URL and secret itself. An endpoint that never accepts the
// event is listed as failed; the workflow itself completes.
func DeliverEvent(ctx workflow.Context, in DeliverEventInput) (DeliverEventResult, error) {
	var res DeliverEventResult
	if err := in.Event.Check(); err != nil {
		return res, temporal.NewNonRetryableApplicationError(err.Error(), "BadEvent", nil)
	}
	listCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	})
	var subs activities.ListWebhookSubscribersResult
	err := workflow.ExecuteActivity(listCtx, a.ListWebhookSubscribers, activities.ListWebhookSubscribersInput{
		OrgID: in.Event.OrgID, EventType: in.Event.Type}).Get(ctx, &subs)
	if err != nil {
		return res, err
	}
	policy := DeliveryRetryPolicy()
	if in.Retry != nil {
		policy = *in.Retry
	}
	sendCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: deliveryAttemptTimeout,
		RetryPolicy:         &policy,
	})
	futures := make([]workflow.Future, len(subs.EndpointIDs))
	for i, id := range subs.EndpointIDs {
		futures[i] = workflow.ExecuteActivity(sendCtx, a.DeliverWebhook, activities.DeliverWebhookInput{EndpointID: id, Event: in.Event})
	}
	for i, f := range futures {
		id := subs.EndpointIDs[i]
		var sent activities.DeliverWebhookResult
		switch err := f.Get(ctx, &sent); {
		case err != nil:
			workflow.GetLogger(ctx).Warn("webhook not delivered within the retry budget", "event", in.Event.ID, "endpoint", id, "error", err)
			res.Failed = append(res.Failed, id)
		case sent.Skipped != "":
			res.Skipped = append(res.Skipped, id)
		default:
			res.Delivered = append(res.Delivered, id)
		}
	}
	return res, nil
}

// deliverEventChildOptions start DeliverEvent from a workflow: the child
// outlives its parent (a delivery retried for a day must not die with the
// lifecycle workflow that announced it), and its id is never reused.
func deliverEventChildOptions(ev webhooks.Event) workflow.ChildWorkflowOptions {
	return workflow.ChildWorkflowOptions{
		WorkflowID:            DeliverEventID(ev.ID),
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}
}

// startDelivery starts DeliverEvent for ev as a child under DeliverEventID.
func startDelivery(ctx workflow.Context, ev webhooks.Event) workflow.ChildWorkflowFuture {
	return workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, deliverEventChildOptions(ev)), DeliverEvent, DeliverEventInput{Event: ev})
}

// Announce delivers ev to its org's subscribers, from workflow code: it
// starts DeliverEvent as a child under DeliverEventID and returns once the
// child started (it does not wait for the deliveries). Announcing an event
// whose delivery was started before, by a workflow or by Starter.Announce,
// is success and delivers nothing again. Set ev.OccurredAt from
// workflow.Now, and keep ev.Data free of secrets (it is in the history).
func Announce(ctx workflow.Context, ev webhooks.Event) error {
	if err := ev.Check(); err != nil {
		return err
	}
	err := startDelivery(ctx, ev).GetChildWorkflowExecution().Get(ctx, nil)
	if err != nil && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return fmt.Errorf("announce %s %s: %w", ev.Type, ev.ID, err)
	}
	return nil
}
