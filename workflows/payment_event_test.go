package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"gorm.io/gorm"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/billing"
	"github.com/expd/expd/internal/stripemock"
	"github.com/expd/expd/internal/temporaltest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/orgs"
	expdworker "github.com/expd/expd/worker"
	"github.com/expd/expd/workflows"
)

// startWorker runs expd's real worker registration against the shared
// in-process Temporal server.
func startWorker(t *testing.T, acts *activities.Activities) *temporaltest.Env {
	t.Helper()
	env := temporaltest.Start(t)
	env.NewWorker(func(r worker.Registry) { expdworker.Register(r, acts) })
	return env
}

func runPaymentEvent(t *testing.T, env *temporaltest.Env, ev billing.Event) (workflows.PaymentEventResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.PaymentEventID(ev.ID), TaskQueue: env.TaskQueue},
		workflows.PaymentEvent, workflows.PaymentEventInput{Event: ev})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	var res workflows.PaymentEventResult
	err = run.Get(ctx, &res)
	return res, err
}

func newOrg(t *testing.T, db *gorm.DB) orgs.Org {
	t.Helper()
	o, err := orgs.Ensure(context.Background(), db, "org_"+t.Name(), "slug")
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func reloadOrg(t *testing.T, db *gorm.DB, id string) orgs.Org {
	t.Helper()
	o, err := orgs.Get(context.Background(), db, id)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// stripeMockPrice asks stripe-mock which price its canned subscriptions
// carry, so a client can be configured to sell it.
func stripeMockPrice(t *testing.T, srv *stripemock.Server) string {
	t.Helper()
	probe := billing.New(billing.Config{SecretKey: "sk_test_123", PricePro: "p", PriceBusiness: "b", APIBase: srv.URL, HTTPClient: srv.HTTPClient()})
	sub, err := probe.Subscription(context.Background(), "sub_probe")
	if err != nil {
		t.Fatal(err)
	}
	return sub.PriceID
}

func TestPaymentEventReconcilesWithStripe(t *testing.T) {
	t.Parallel()
	db := testenv.DB(t)
	srv := stripemock.Start(t)
	canned := stripeMockPrice(t, srv)
	bc := billing.New(billing.Config{SecretKey: "sk_test_123", PricePro: "price_pro", PriceBusiness: canned, APIBase: srv.URL, HTTPClient: srv.HTTPClient()})
	env := startWorker(t, &activities.Activities{DB: db, Billing: bc})
	o := newOrg(t, db)

	// The event is stale (canceled, an unknown price); Stripe says the
	// subscription is active on the business price, and Stripe wins.
	res, err := runPaymentEvent(t, env, billing.Event{ID: "evt_reconcile_" + o.ID, Type: billing.EventSubscriptionUpdated,
		Created: time.Now().UTC(), OrgID: o.ID, SubscriptionID: "sub_live", Status: "canceled", PriceID: "price_gone"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != orgs.PlanApplied || res.Plan != "business" || res.Source != workflows.SourceProvider {
		t.Fatalf("result %+v", res)
	}
	got := reloadOrg(t, db, o.ID)
	if got.Plan != "business" || got.SubscriptionStatus != "active" || got.StripeCustomerID == nil || *got.StripeCustomerID == "" ||
		*got.StripeSubscriptionID != "sub_live" {
		t.Fatalf("org %+v", got)
	}
	if n := len(srv.Recorder.Requests("/v1/subscriptions/sub_live")); n != 1 {
		t.Fatalf("%d reads of the subscription, want 1", n)
	}

	// A deleted subscription is final: no read, the org goes to free.
	res, err = runPaymentEvent(t, env, billing.Event{ID: "evt_deleted_" + o.ID, Type: billing.EventSubscriptionDeleted,
		Created: time.Now().UTC().Add(time.Second), OrgID: o.ID, SubscriptionID: "sub_live", Status: "canceled", PriceID: canned})
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan != "free" || res.Source != workflows.SourceEvent || reloadOrg(t, db, o.ID).Plan != "free" {
		t.Fatalf("after deletion: result %+v", res)
	}
	if n := len(srv.Recorder.Requests("/v1/subscriptions/sub_live")); n != 1 {
		t.Fatalf("deleted subscription was read from Stripe (%d reads)", n)
	}
}

func TestPaymentEventWithoutBillingUsesTheEvent(t *testing.T) {
	t.Parallel()
	db := testenv.DB(t)
	env := startWorker(t, &activities.Activities{DB: db})
	o := newOrg(t, db)

	res, err := runPaymentEvent(t, env, billing.Event{ID: "evt_checkout_" + o.ID, Type: billing.EventCheckoutCompleted,
		Created: time.Now().UTC(), OrgID: o.ID, CustomerID: "cus_" + o.ID[:8], SubscriptionID: "sub_1", Status: "active", Plan: "pro"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != orgs.PlanApplied || res.Plan != "pro" || res.Source != workflows.SourceEvent {
		t.Fatalf("result %+v", res)
	}
	if got := reloadOrg(t, db, o.ID); got.Plan != "pro" || *got.StripeCustomerID != "cus_"+o.ID[:8] {
		t.Fatalf("org %+v", got)
	}
}

func TestPaymentEventWithAnUnsoldPriceFails(t *testing.T) {
	t.Parallel()
	db := testenv.DB(t)
	bc := billing.New(billing.Config{PricePro: "price_pro", PriceBusiness: "price_business"}) // prices known, no API key
	env := startWorker(t, &activities.Activities{DB: db, Billing: bc})
	o := newOrg(t, db)

	_, err := runPaymentEvent(t, env, billing.Event{ID: "evt_unsold_" + o.ID, Type: billing.EventSubscriptionUpdated,
		Created: time.Now().UTC(), OrgID: o.ID, SubscriptionID: "sub_x", Status: "active", PriceID: "price_other", Plan: "pro"})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != activities.ErrUnknownPrice {
		t.Fatalf("err %v, want an %s failure", err, activities.ErrUnknownPrice)
	}
	if got := reloadOrg(t, db, o.ID); got.Plan != "free" {
		t.Fatalf("plan %q after a failed event", got.Plan)
	}
}
