package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/expd/expd/webhooks"
)

// ListWebhookSubscribersInput names an org's event type.
type ListWebhookSubscribersInput struct {
	OrgID     string
	EventType string
}

// ListWebhookSubscribersResult holds endpoint ids only: the URL and secret
// are read by DeliverWebhook, so neither enters a workflow history.
type ListWebhookSubscribersResult struct {
	EndpointIDs []string
}

// ListWebhookSubscribers lists the org's live endpoints that take the
// event type.
func (a *Activities) ListWebhookSubscribers(ctx context.Context, in ListWebhookSubscribersInput) (ListWebhookSubscribersResult, error) {
	ids, err := webhooks.Subscribers(ctx, a.DB, in.OrgID, in.EventType)
	if err != nil {
		return ListWebhookSubscribersResult{}, err
	}
	return ListWebhookSubscribersResult{EndpointIDs: ids}, nil
}

// DeliverWebhookInput is one event for one endpoint.
type DeliverWebhookInput struct {
	EndpointID string
	Event      webhooks.Event
}

// DeliverWebhookResult is a delivered (StatusCode) or skipped (Skipped
// says why) event.
type DeliverWebhookResult struct {
	StatusCode int
	Skipped    string
}

// Why a delivery was skipped.
const (
	SkipEndpointGone     = "endpoint deleted"
	SkipEndpointDisabled = "endpoint disabled"
)

// attempt is the activity's attempt number (1 outside an activity).
func attempt(ctx context.Context) int {
	if !activity.IsActivity(ctx) {
		return 1
	}
	return int(activity.GetInfo(ctx).Attempt)
}

// Error types of a failed attempt: DeliveryFailed is retried (after the
// receiver's Retry-After when it gave one), EndpointGone is not (the
// receiver answered 410 Gone and the endpoint is now disabled).
const (
	DeliveryFailed = "DeliveryFailed"
	EndpointGone   = "EndpointGone"
)

// DeliverWebhook makes one delivery attempt: it loads the endpoint by id
// (secret included), signs and posts the event, and records the attempt
// (its Temporal attempt number, status, error, duration, time). A failed
// attempt is an error so Temporal retries it on the workflow's policy; an
// endpoint deleted meanwhile ends the delivery without an attempt. The
// event id is the webhook-id on every attempt, so a subscriber that got an
// attempt whose answer was lost deduplicates the retry.
func (a *Activities) DeliverWebhook(ctx context.Context, in DeliverWebhookInput) (DeliverWebhookResult, error) {
	t, err := webhooks.LoadTarget(ctx, a.DB, a.Secrets, in.EndpointID)
	if errors.Is(err, webhooks.ErrNotFound) || (err == nil && t.Deleted) {
		return DeliverWebhookResult{Skipped: SkipEndpointGone}, nil
	}
	if err != nil {
		return DeliverWebhookResult{}, err
	}
	if t.Disabled {
		return DeliverWebhookResult{Skipped: SkipEndpointDisabled}, nil
	}
	if t.OrgID != in.Event.OrgID {
		return DeliverWebhookResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("endpoint %s is not an endpoint of org %s", in.EndpointID, in.Event.OrgID), "WrongOrg", nil)
	}
	sender := a.Webhooks
	if sender == nil {
		sender = &webhooks.Sender{}
	}
	at := a.now()
	res := sender.Send(ctx, t.URL, t.Secret, in.Event, at)
	rec := webhooks.AttemptRecord{OrgID: t.OrgID, EndpointID: in.EndpointID, EventID: in.Event.ID, EventType: in.Event.Type,
		Attempt: attempt(ctx), StatusCode: res.StatusCode, Duration: res.Duration, At: at}
	if res.Err != nil {
		rec.Error = res.Err.Error()
	}
	if err := webhooks.RecordAttempt(ctx, a.DB, rec); err != nil {
		return DeliverWebhookResult{}, err
	}
	out := DeliverWebhookResult{StatusCode: res.StatusCode}
	switch {
	case res.Gone():
		reason := fmt.Sprintf("the receiver answered 410 Gone to event %s", in.Event.ID)
		if _, err := webhooks.Disable(ctx, a.DB, in.EndpointID, reason, workflowID(ctx), at); err != nil {
			return out, err
		}
		return out, temporal.NewNonRetryableApplicationError(rec.Error+": endpoint disabled", EndpointGone, nil)
	case res.Err != nil && res.RetryAfter > 0:
		return out, temporal.NewApplicationErrorWithOptions(rec.Error, DeliveryFailed,
			temporal.ApplicationErrorOptions{NextRetryDelay: honouredRetryAfter(ctx, res.RetryAfter)})
	case res.Err != nil:
		return out, temporal.NewApplicationError(rec.Error, DeliveryFailed)
	}
	return out, nil
}

// honouredRetryAfter is the wait before the next attempt when the receiver
// asked for wait: never sooner than the retry policy's own backoff for this
// attempt (a receiver asking for a second must not burn the attempts of a
// day in a minute), never later than the policy's maximum interval. The
// policy's attempt count is untouched, so Retry-After cannot stretch a
// delivery beyond its retry budget.
func honouredRetryAfter(ctx context.Context, wait time.Duration) time.Duration {
	if !activity.IsActivity(ctx) {
		return wait
	}
	info := activity.GetInfo(ctx)
	p := info.RetryPolicy
	if p == nil {
		return wait
	}
	backoff := p.InitialInterval
	for i := int32(1); i < info.Attempt && (p.MaximumInterval == 0 || backoff < p.MaximumInterval); i++ {
		backoff = time.Duration(float64(backoff) * p.BackoffCoefficient)
	}
	wait = max(wait, backoff)
	if p.MaximumInterval > 0 {
		wait = min(wait, p.MaximumInterval)
	}
	return wait
}
