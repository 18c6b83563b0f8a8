package api_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/api"
	"github.com/expd/expd/billing"
	"github.com/expd/expd/internal/stripemock"
	"github.com/expd/expd/internal/temporaltest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/orgs"
)

const stripeWebhookSecret = "whsec_test_payment"

// webhookEnv is the router with a worker on the in-process Temporal
// server, the identity webhook secret and the given billing adapter.
type webhookEnv struct {
	*testenv.Env
	Temporal   *temporaltest.Env
	SvixSecret string
}

func newWebhookEnv(t *testing.T, bc *billing.Client) *webhookEnv {
	t.Helper()
	secret := testenv.WebhookSecret(t)
	env, tenv := testenv.NewWithWorker(t, func(a *activities.Activities) { a.Billing = bc },
		func(d *api.Deps) { d.Billing, d.SvixSecret = bc, secret })
	return &webhookEnv{Env: env, Temporal: tenv, SvixSecret: secret}
}

// stripeMockBilling is a configured adapter on a fresh stripe-mock.
func stripeMockBilling(t *testing.T) (*billing.Client, *stripemock.Server) {
	t.Helper()
	srv := stripemock.Start(t)
	return billing.New(billing.Config{
		SecretKey: "sk_test_123", WebhookSecret: stripeWebhookSecret,
		PricePro: "price_pro", PriceBusiness: "price_business",
		APIBase: srv.URL, HTTPClient: srv.HTTPClient(),
		ReturnOrigins: []string{"https://app.example"},
	}), srv
}

// eventOnlyBilling verifies webhooks and knows no Stripe API key, so
// events are applied from their own payload.
func eventOnlyBilling() *billing.Client {
	return billing.New(billing.Config{WebhookSecret: stripeWebhookSecret})
}

// waitWorkflow waits for the workflow with id to finish and decodes its result.
func (e *webhookEnv) waitWorkflow(t *testing.T, id string, result any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Temporal.Client.GetWorkflow(ctx, id, "").Get(ctx, result); err != nil {
		t.Fatalf("workflow %s: %v", id, err)
	}
}

func (e *webhookEnv) org(t *testing.T, id string) orgs.Org {
	t.Helper()
	o, err := orgs.Get(context.Background(), e.DB, id)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// unreachableTemporal is a client of a Temporal that is not there.
func unreachableTemporal(t *testing.T) client.Client {
	t.Helper()
	c, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// post sends a request without failing the test, for use off the test
// goroutine; headers are name, value pairs.
func post(url string, body []byte, headers []string) (int, error) {
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json") // as the provider sends it
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
