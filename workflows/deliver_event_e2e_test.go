package workflows_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"gorm.io/gorm"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/audit"
	"github.com/expd/expd/internal/temporaltest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/webhooks"
	expdworker "github.com/expd/expd/worker"
	"github.com/expd/expd/workflowclient"
	"github.com/expd/expd/workflows"
)

// listener is a subscriber's endpoint: it answers the queued statuses in
// turn (then 200), verifying each delivery's signature with svix.
type listener struct {
	t          *testing.T
	secret     string
	mu         sync.Mutex
	statuses   []int
	retryAfter string // sent with every 429 and 503 answer
	received   []received
}

type received struct {
	ID       string
	Body     webhooks.Body
	Verified error
	At       time.Time
}

func (l *listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	payload, _ := io.ReadAll(r.Body)
	l.mu.Lock()
	defer l.mu.Unlock()
	rec := received{ID: r.Header.Get("webhook-id"), At: time.Now()}
	wh, err := svix.NewWebhook(l.secret)
	if err == nil {
		err = wh.Verify(payload, r.Header)
	}
	rec.Verified = err
	_ = json.Unmarshal(payload, &rec.Body)
	l.received = append(l.received, rec)
	status := http.StatusOK
	if len(l.statuses) > 0 {
		status, l.statuses = l.statuses[0], l.statuses[1:]
	}
	if l.retryAfter != "" && (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) {
		w.Header().Set("Retry-After", l.retryAfter)
	}
	w.WriteHeader(status)
}

func (l *listener) got() []received {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]received(nil), l.received...)
}

// deliveryFixture is an org with one endpoint on a local listener, and a
// worker with the real activities on the in-process Temporal server.
type deliveryFixture struct {
	env      *temporaltest.Env
	db       *gorm.DB
	org      string
	endpoint string
	l        *listener
}

func newDeliveryFixture(t *testing.T, statuses ...int) deliveryFixture {
	t.Helper()
	ctx := context.Background()
	db := testenv.DB(t)
	org, err := orgs.Ensure(ctx, db, "org_clerk_deliver", "deliver")
	if err != nil {
		t.Fatal(err)
	}
	l := &listener{t: t, statuses: statuses}
	srv := httptest.NewServer(l)
	t.Cleanup(srv.Close)
	ep, err := webhooks.Create(ctx, db, testenv.Keyring(t), org.ID, webhooks.NewEndpoint{URL: srv.URL + "/hooks", Actor: "user_1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	l.secret = ep.Secret
	env := temporaltest.Start(t)
	env.NewWorker(func(r worker.Registry) {
		expdworker.Register(r, &activities.Activities{DB: db, Secrets: testenv.Keyring(t), Webhooks: &webhooks.Sender{AllowPrivate: true}})
	})
	return deliveryFixture{env: env, db: db, org: org.ID, endpoint: ep.ID, l: l}
}

func (f deliveryFixture) event(key string) webhooks.Event {
	return webhooks.Event{ID: webhooks.EventID(key), OrgID: f.org, Type: webhooks.EventGuardrailBreached, ExperimentID: "exp-1",
		OccurredAt: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), Data: json.RawMessage(`{"metric":"error_rate"}`)}
}

func (f deliveryFixture) run(t *testing.T, ev webhooks.Event, retry *temporal.RetryPolicy) workflows.DeliverEventResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var res workflows.DeliverEventResult
	f.env.Execute(ctx, t, client.StartWorkflowOptions{ID: workflows.DeliverEventID(ev.ID)},
		workflows.DeliverEvent, workflows.DeliverEventInput{Event: ev, Retry: retry}, &res)
	return res
}

func (f deliveryFixture) attempts(t *testing.T) []webhooks.Delivery {
	t.Helper()
	page, err := webhooks.ListDeliveries(context.Background(), f.db, f.org, f.endpoint, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	return page.Deliveries
}

var fastRetry = &temporal.RetryPolicy{InitialInterval: 10 * time.Millisecond, BackoffCoefficient: 1, MaximumAttempts: 4}

// 500, 500, then 200: three signed attempts with the same webhook-id, each
// recorded; the third succeeds.
func TestDeliveryRetriedUntilTheListenerAccepts(t *testing.T) {
	f := newDeliveryFixture(t, 500, 500)
	ev := f.event("breach-1")
	res := f.run(t, ev, fastRetry)
	if len(res.Delivered) != 1 || res.Delivered[0] != f.endpoint {
		t.Fatalf("result %+v", res)
	}
	got := f.l.got()
	if len(got) != 3 {
		t.Fatalf("listener got %d requests, want 3", len(got))
	}
	for i, r := range got {
		if r.Verified != nil || r.ID != ev.ID || r.Body.Type != ev.Type || !r.Body.Timestamp.Equal(ev.OccurredAt) || string(r.Body.Data) != `{"metric":"error_rate"}` {
			t.Fatalf("request %d: %+v (verify: %v)", i+1, r, r.Verified)
		}
	}
	att := f.attempts(t) // newest first
	if len(att) != 3 {
		t.Fatalf("recorded %d attempts, want 3: %+v", len(att), att)
	}
	for i, a := range att {
		wantAttempt, wantStatus := 3-i, 500
		if i == 0 {
			wantStatus = 200
		}
		if a.Attempt != wantAttempt || a.StatusCode != wantStatus || a.Succeeded != (i == 0) || a.EventID != ev.ID ||
			(i > 0 && a.Error == "") || a.AttemptedAt.IsZero() || a.DurationMs < 0 {
			t.Fatalf("attempt %d: %+v", wantAttempt, a)
		}
	}
}

// A listener that always answers 500: the delivery stops after the budget
// (4 attempts here) with every attempt recorded, and the workflow reports
// the endpoint as failed.
func TestDeliveryStopsAfterTheRetryBudget(t *testing.T) {
	f := newDeliveryFixture(t, 500, 500, 500, 500, 500, 500)
	res := f.run(t, f.event("breach-dead"), fastRetry)
	if len(res.Failed) != 1 || len(res.Delivered) != 0 {
		t.Fatalf("result %+v", res)
	}
	if n := len(f.l.got()); n != 4 {
		t.Fatalf("listener got %d requests, want 4", n)
	}
	att := f.attempts(t)
	if len(att) != 4 || att[0].Attempt != 4 || att[3].Attempt != 1 || att[0].Succeeded || att[0].StatusCode != 500 {
		t.Fatalf("attempts %+v", att)
	}
}

// Announcing one event twice (a retried step, a second API instance)
// delivers it once.
func TestDuplicateAnnounceDeliversOnce(t *testing.T) {
	f := newDeliveryFixture(t)
	s := workflowclient.Starter{Client: f.env.Client, TaskQueue: f.env.TaskQueue}
	ev := f.event("stopped-once")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := 0; i < 2; i++ {
		if err := s.Announce(ctx, ev); err != nil {
			t.Fatalf("announce %d: %v", i+1, err)
		}
	}
	if err := f.env.Client.GetWorkflow(ctx, workflows.DeliverEventID(ev.ID), "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// Once completed, the id is still taken.
	if err := s.Announce(ctx, ev); err != nil {
		t.Fatalf("announce after completion: %v", err)
	}
	if got := f.l.got(); len(got) != 1 || got[0].Verified != nil {
		t.Fatalf("listener got %+v, want one verified delivery", got)
	}
}

// A deleted endpoint gets nothing, and no attempt is recorded.
func TestDeletedEndpointIsSkipped(t *testing.T) {
	f := newDeliveryFixture(t)
	if err := webhooks.Delete(context.Background(), f.db, f.org, f.endpoint, "user_1", time.Now()); err != nil {
		t.Fatal(err)
	}
	ev := f.event("after-delete")
	// Delivered straight to the deleted endpoint (as a retry after the
	// deletion would be): skipped.
	acts := &activities.Activities{DB: f.db, Secrets: testenv.Keyring(t), Webhooks: &webhooks.Sender{AllowPrivate: true}}
	r, err := acts.DeliverWebhook(context.Background(), activities.DeliverWebhookInput{EndpointID: f.endpoint, Event: ev})
	if err != nil || r.Skipped == "" {
		t.Fatalf("delivery to a deleted endpoint: %+v, %v", r, err)
	}
	res := f.run(t, ev, fastRetry)
	if len(res.Delivered)+len(res.Failed)+len(res.Skipped) != 0 || len(f.l.got()) != 0 || len(f.attempts(t)) != 0 {
		t.Fatalf("deleted endpoint: result %+v, %d requests", res, len(f.l.got()))
	}
}

// A 503 with Retry-After: 2 delays the next attempt by at least the two
// seconds asked for, although the policy's own backoff is 10 ms.
func TestDeliveryHonoursRetryAfter(t *testing.T) {
	f := newDeliveryFixture(t, http.StatusServiceUnavailable)
	f.l.retryAfter = "2"
	res := f.run(t, f.event("retry-after"), &temporal.RetryPolicy{InitialInterval: 10 * time.Millisecond, BackoffCoefficient: 1,
		MaximumInterval: 10 * time.Second, MaximumAttempts: 4})
	got := f.l.got()
	if len(res.Delivered) != 1 || len(got) != 2 {
		t.Fatalf("result %+v after %d requests", res, len(got))
	}
	if gap := got[1].At.Sub(got[0].At); gap < 2*time.Second {
		t.Fatalf("retried %v after a Retry-After of 2 s", gap)
	}
}

// A Retry-After beyond the retry policy's maximum interval is cut to it,
// and the policy's attempt count still ends the delivery: a receiver
// asking for an hour (429) is tried again after the 1 s maximum, twice in
// all.
func TestRetryAfterIsBoundedByTheRetryBudget(t *testing.T) {
	f := newDeliveryFixture(t, http.StatusTooManyRequests, http.StatusTooManyRequests, http.StatusTooManyRequests)
	f.l.retryAfter = "3600"
	res := f.run(t, f.event("retry-after-long"), &temporal.RetryPolicy{InitialInterval: 10 * time.Millisecond, BackoffCoefficient: 1,
		MaximumInterval: time.Second, MaximumAttempts: 2})
	if len(res.Failed) != 1 || len(f.l.got()) != 2 || len(f.attempts(t)) != 2 {
		t.Fatalf("result %+v after %d requests", res, len(f.l.got()))
	}
}

// 410 Gone disables the endpoint at once: no retry, the attempt recorded,
// the endpoint shows when and why, the audit log has the system's entry
// from the delivering workflow, and the next event is not sent.
func TestGoneDisablesTheEndpoint(t *testing.T) {
	f := newDeliveryFixture(t, http.StatusGone, http.StatusGone)
	ev := f.event("gone")
	res := f.run(t, ev, fastRetry)
	if len(res.Failed) != 1 || len(f.l.got()) != 1 {
		t.Fatalf("result %+v after %d requests", res, len(f.l.got()))
	}
	if att := f.attempts(t); len(att) != 1 || att[0].StatusCode != http.StatusGone {
		t.Fatalf("attempts %+v", att)
	}
	ep, err := webhooks.Get(context.Background(), f.db, f.org, f.endpoint)
	if err != nil || ep.DisabledAt == nil || !strings.Contains(ep.DisabledReason, "410") {
		t.Fatalf("endpoint after 410: %+v, %v", ep, err)
	}
	page, err := audit.List(context.Background(), f.db, f.org, audit.Query{Action: audit.WebhookEndpointDisabled, Limit: 10})
	if err != nil || len(page.Entries) != 1 || page.Entries[0].Actor != audit.SystemActor || page.Entries[0].WorkflowID != workflows.DeliverEventID(ev.ID) {
		t.Fatalf("audit %+v, %v", page.Entries, err)
	}
	if res := f.run(t, f.event("after-gone"), fastRetry); len(res.Delivered)+len(res.Failed)+len(res.Skipped) != 0 || len(f.l.got()) != 1 {
		t.Fatalf("disabled endpoint: result %+v, %d requests", res, len(f.l.got()))
	}
}
