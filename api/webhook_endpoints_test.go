package api_test

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/api"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/webhooks"
)

// publicDNS resolves the test's public names without the network.
type publicDNS struct{}

func (publicDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch host {
	case "hooks.example.com":
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	case "rebind.example.com":
		return []netip.Addr{netip.MustParseAddr("10.0.0.7")}, nil
	}
	return nil, errors.New("no such host")
}

type webhookEndpoint struct {
	ID         string   `json:"id"`
	URL        string   `json:"url"`
	EventTypes []string `json:"event_types"`
	Secret     string   `json:"secret"`
}

func newEndpointEnv(t *testing.T, dev bool) *testenv.Env {
	return newSDKEnv(t, func(d *api.Deps) {
		d.Resolver = publicDNS{}
		if dev {
			d.DevToken = "dev-token"
		}
	})
}

func createEndpoint(t *testing.T, env *testenv.Env, org testenv.Org, body any) webhookEndpoint {
	t.Helper()
	r := env.Do(t, "POST", "/v1/webhook-endpoints", body, testenv.Bearer(org.AdminToken)...)
	if r.Status != http.StatusCreated {
		t.Fatalf("create endpoint: %d %s", r.Status, r.Body)
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("secret answer is cacheable: %q", r.Header.Get("Cache-Control"))
	}
	var ep webhookEndpoint
	r.JSON(t, &ep)
	return ep
}

func TestWebhookEndpointLifecycle(t *testing.T) {
	env := newEndpointEnv(t, false)
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	ep := createEndpoint(t, env, org, map[string]any{"url": "https://hooks.example.com/expd", "description": "ops",
		"event_types": []string{"guardrail.breached", "srm.failed"}})
	if ep.ID == "" || !strings.HasPrefix(ep.Secret, "whsec_") || len(ep.EventTypes) != 2 {
		t.Fatalf("created %+v", ep)
	}
	all := createEndpoint(t, env, org, map[string]any{"url": "https://hooks.example.com/all"})
	if all.EventTypes == nil || len(all.EventTypes) != 0 {
		t.Fatalf("default subscription %+v, want [] (every type)", all)
	}

	// The secret is never served again.
	for _, path := range []string{"/v1/webhook-endpoints", "/v1/webhook-endpoints/" + ep.ID, "/v1/webhook-endpoints/" + ep.ID + "/deliveries", "/v1/audit"} {
		r := env.Do(t, "GET", path, nil, admin...)
		if r.Status != http.StatusOK || strings.Contains(string(r.Body), "whsec_") || strings.Contains(string(r.Body), `"secret":"`) {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
	}
	var list struct {
		Endpoints []webhookEndpoint `json:"endpoints"`
	}
	env.Do(t, "GET", "/v1/webhook-endpoints", nil, admin...).JSON(t, &list)
	if len(list.Endpoints) != 2 || list.Endpoints[0].ID != ep.ID {
		t.Fatalf("list %+v", list)
	}
	var deliveries struct {
		Deliveries []any `json:"deliveries"`
	}
	env.Do(t, "GET", "/v1/webhook-endpoints/"+ep.ID+"/deliveries?limit=5", nil, admin...).JSON(t, &deliveries)
	if deliveries.Deliveries == nil || len(deliveries.Deliveries) != 0 {
		t.Fatalf("deliveries of a new endpoint: %+v", deliveries)
	}

	if r := env.Do(t, "DELETE", "/v1/webhook-endpoints/"+ep.ID, nil, admin...); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	p := testenv.ExpectProblem(t, env.Do(t, "GET", "/v1/webhook-endpoints/"+ep.ID, nil, admin...), http.StatusNotFound)
	if p.Code != api.CodeWebhookEndpointNotFound {
		t.Fatalf("deleted endpoint: %+v", p)
	}
	testenv.ExpectProblem(t, env.Do(t, "DELETE", "/v1/webhook-endpoints/"+ep.ID, nil, admin...), http.StatusNotFound)
	// Its deliveries stay readable.
	if r := env.Do(t, "GET", "/v1/webhook-endpoints/"+ep.ID+"/deliveries", nil, admin...); r.Status != http.StatusOK {
		t.Fatalf("deliveries of a deleted endpoint: %d %s", r.Status, r.Body)
	}

	// Audit: created twice, deleted once, by the admin.
	var page auditPage
	env.Do(t, "GET", "/v1/audit?"+url.Values{"action": {"webhook_endpoint.created"}}.Encode(), nil, admin...).JSON(t, &page)
	if len(page.Entries) != 2 || page.Entries[0].Actor != "user_admin_"+org.ClerkOrgID {
		t.Fatalf("created entries %+v", page.Entries)
	}
	env.Do(t, "GET", "/v1/audit?action=webhook_endpoint.deleted", nil, admin...).JSON(t, &page)
	if len(page.Entries) != 1 || !strings.Contains(page.Entries[0].Summary, ep.ID) {
		t.Fatalf("deleted entries %+v", page.Entries)
	}
}

func TestWebhookEndpointDevModeAllowsLocalListeners(t *testing.T) {
	env := newEndpointEnv(t, true)
	org := env.NewOrg(t)
	ep := createEndpoint(t, env, org, map[string]any{"url": "http://127.0.0.1:9/hooks"})
	if ep.URL != "http://127.0.0.1:9/hooks" {
		t.Fatalf("dev endpoint %+v", ep)
	}
	// The same outside dev mode is refused.
	prod := newEndpointEnv(t, false)
	porg := prod.NewOrg(t)
	p := testenv.ExpectProblem(t, prod.Do(t, "POST", "/v1/webhook-endpoints", map[string]any{"url": "http://127.0.0.1:9/hooks"}, testenv.Bearer(porg.AdminToken)...), 400)
	if !p.HasFieldError("url") {
		t.Fatalf("http loopback outside dev: %+v", p)
	}
}

func TestWebhookEndpointBadInput(t *testing.T) {
	env := newEndpointEnv(t, false)
	org := env.NewOrg(t)
	other := env.NewOrg(t)
	theirs := createEndpoint(t, env, other, map[string]any{"url": "https://hooks.example.com/theirs"})
	admin := testenv.Bearer(org.AdminToken)
	post := func(body any, headers []string) testenv.Response {
		return env.Do(t, "POST", "/v1/webhook-endpoints", body, headers...)
	}
	cases := []struct {
		name   string
		r      testenv.Response
		status int
		field  string
		code   string
	}{
		{"malformed JSON", post(`{"url": `, admin), 400, "", api.CodeMalformedJSON},
		{"not an object", post(`["https://hooks.example.com"]`, admin), 400, "", ""},
		{"trailing data", post(`{"url":"https://hooks.example.com/a"} {}`, admin), 400, "", api.CodeMalformedJSON},
		{"url of the wrong type", post(`{"url": 42}`, admin), 400, "url", api.CodeValidationFailed},
		{"event_types of the wrong type", post(`{"url":"https://hooks.example.com/a","event_types":"srm.failed"}`, admin), 400, "event_types", api.CodeValidationFailed},
		{"missing url", post(`{}`, admin), 400, "url", api.CodeValidationFailed},
		{"empty body", post(``, admin), 400, "", api.CodeMalformedJSON},
		{"http", post(map[string]any{"url": "http://hooks.example.com/a"}, admin), 400, "url", api.CodeValidationFailed},
		{"loopback", post(map[string]any{"url": "https://127.0.0.1/a"}, admin), 400, "url", api.CodeValidationFailed},
		{"metadata service", post(map[string]any{"url": "https://169.254.169.254/latest"}, admin), 400, "url", api.CodeValidationFailed},
		{"private name", post(map[string]any{"url": "https://rebind.example.com/a"}, admin), 400, "url", api.CodeValidationFailed},
		{"localhost", post(map[string]any{"url": "https://localhost/a"}, admin), 400, "url", api.CodeValidationFailed},
		{"credentials in url", post(map[string]any{"url": "https://u:p@hooks.example.com/a"}, admin), 400, "url", api.CodeValidationFailed},
		{"relative url", post(map[string]any{"url": "/hooks"}, admin), 400, "url", api.CodeValidationFailed},
		{"NUL in url", post(map[string]any{"url": "https://hooks.example.com/\x00"}, admin), 400, "url", api.CodeValidationFailed},
		{"NUL in description", post(map[string]any{"url": "https://hooks.example.com/a", "description": "a\x00b"}, admin), 400, "description", api.CodeValidationFailed},
		{"long description", post(map[string]any{"url": "https://hooks.example.com/a", "description": strings.Repeat("d", 257)}, admin), 400, "description", api.CodeValidationFailed},
		{"long url", post(map[string]any{"url": "https://hooks.example.com/" + strings.Repeat("a", 3000)}, admin), 400, "url", api.CodeValidationFailed},
		{"unknown event type", post(map[string]any{"url": "https://hooks.example.com/a", "event_types": []string{"srm.failed", "experiment.exploded"}}, admin), 400, "event_types[1]", api.CodeValidationFailed},
		{"event type twice", post(map[string]any{"url": "https://hooks.example.com/a", "event_types": []string{"srm.failed", "srm.failed"}}, admin), 400, "event_types[1]", api.CodeValidationFailed},
		{"oversized body", post(`{"url":"https://hooks.example.com/a","description":"`+strings.Repeat("x", 20<<10)+`"}`, admin), 413, "", api.CodeBodyTooLarge},
		{"no credentials", post(map[string]any{"url": "https://hooks.example.com/a"}, nil), 401, "", api.CodeUnauthorized},
		{"bad token", post(map[string]any{"url": "https://hooks.example.com/a"}, testenv.Bearer("not-a-jwt")), 401, "", api.CodeUnauthorized},
		{"API key instead of a session", post(map[string]any{"url": "https://hooks.example.com/a"}, []string{"X-API-Key", org.SecretKey}), 401, "", api.CodeUnauthorized},
		{"member", post(map[string]any{"url": "https://hooks.example.com/a"}, testenv.Bearer(org.MemberToken)), 403, "", api.CodeAdminRequired},
		{"member lists", env.Do(t, "GET", "/v1/webhook-endpoints", nil, testenv.Bearer(org.MemberToken)...), 403, "", api.CodeAdminRequired},
		{"member deletes", env.Do(t, "DELETE", "/v1/webhook-endpoints/"+theirs.ID, nil, testenv.Bearer(org.MemberToken)...), 403, "", api.CodeAdminRequired},
		{"another org's endpoint", env.Do(t, "GET", "/v1/webhook-endpoints/"+theirs.ID, nil, admin...), 404, "", api.CodeWebhookEndpointNotFound},
		{"delete another org's endpoint", env.Do(t, "DELETE", "/v1/webhook-endpoints/"+theirs.ID, nil, admin...), 404, "", api.CodeWebhookEndpointNotFound},
		{"another org's deliveries", env.Do(t, "GET", "/v1/webhook-endpoints/"+theirs.ID+"/deliveries", nil, admin...), 404, "", api.CodeWebhookEndpointNotFound},
		{"malformed id", env.Do(t, "GET", "/v1/webhook-endpoints/not-an-id", nil, admin...), 404, "", api.CodeWebhookEndpointNotFound},
		{"NUL id", env.Do(t, "DELETE", "/v1/webhook-endpoints/%00", nil, admin...), 404, "", api.CodeWebhookEndpointNotFound},
		{"zero limit", env.Do(t, "GET", "/v1/webhook-endpoints/"+theirs.ID+"/deliveries?limit=0", nil, admin...), 400, "limit", api.CodeValidationFailed},
		{"forged cursor", env.Do(t, "GET", "/v1/webhook-endpoints/"+theirs.ID+"/deliveries?cursor=%00", nil, admin...), 400, "cursor", api.CodeValidationFailed},
		{"PUT", env.Do(t, "PUT", "/v1/webhook-endpoints/"+theirs.ID, map[string]any{}, admin...), 405, "", api.CodeMethodNotAllowed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := testenv.ExpectProblem(t, c.r, c.status)
			if c.field != "" && !p.HasFieldError(c.field) {
				t.Errorf("want an error on %q, got %+v", c.field, p.Errors)
			}
			if c.code != "" && p.Code != c.code {
				t.Errorf("code %q, want %q", p.Code, c.code)
			}
		})
	}
	// Nothing was stored for org, and theirs is untouched.
	var list struct {
		Endpoints []webhookEndpoint `json:"endpoints"`
	}
	env.Do(t, "GET", "/v1/webhook-endpoints", nil, admin...).JSON(t, &list)
	if len(list.Endpoints) != 0 {
		t.Fatalf("bad input stored %+v", list.Endpoints)
	}
	if r := env.Do(t, "GET", "/v1/webhook-endpoints/"+theirs.ID, nil, testenv.Bearer(other.AdminToken)...); r.Status != http.StatusOK {
		t.Fatalf("their endpoint after the attempts: %d", r.Status)
	}
}

func TestWebhookEndpointLimitIsAProblem(t *testing.T) {
	env := newEndpointEnv(t, false)
	org := env.NewOrg(t)
	for i := 0; i < webhooks.MaxEndpoints; i++ {
		createEndpoint(t, env, org, map[string]any{"url": "https://hooks.example.com/a"})
	}
	p := testenv.ExpectProblem(t, env.Do(t, "POST", "/v1/webhook-endpoints", map[string]any{"url": "https://hooks.example.com/a"}, testenv.Bearer(org.AdminToken)...), 409)
	if p.Code != api.CodeWebhookEndpointLimit {
		t.Fatalf("limit: %+v", p)
	}
}

// An endpoint disabled after its receiver answered 410 Gone says so on
// both GET routes, when and why; an enabled one carries neither field.
func TestDisabledWebhookEndpointIsShownOnGet(t *testing.T) {
	env := newEndpointEnv(t, false)
	org := env.NewOrg(t)
	gone := createEndpoint(t, env, org, map[string]any{"url": "https://hooks.example.com/gone"})
	live := createEndpoint(t, env, org, map[string]any{"url": "https://hooks.example.com/live"})
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	if ok, err := webhooks.Disable(t.Context(), env.DB, gone.ID, "the receiver answered 410 Gone to event evt_1", "webhook/evt_1", at); err != nil || !ok {
		t.Fatalf("disable: %v %v", ok, err)
	}
	type shown struct {
		ID             string     `json:"id"`
		DisabledAt     *time.Time `json:"disabled_at"`
		DisabledReason string     `json:"disabled_reason"`
	}
	var one shown
	r := env.Do(t, "GET", "/v1/webhook-endpoints/"+gone.ID, nil, testenv.Bearer(org.AdminToken)...)
	r.JSON(t, &one)
	if r.Status != http.StatusOK || one.DisabledAt == nil || !one.DisabledAt.Equal(at) || one.DisabledReason == "" {
		t.Fatalf("GET disabled endpoint: %d %s", r.Status, r.Body)
	}
	var all struct{ Endpoints []shown }
	r = env.Do(t, "GET", "/v1/webhook-endpoints", nil, testenv.Bearer(org.AdminToken)...)
	r.JSON(t, &all)
	if len(all.Endpoints) != 2 || all.Endpoints[0].DisabledAt == nil || all.Endpoints[1].ID != live.ID || all.Endpoints[1].DisabledAt != nil ||
		strings.Contains(string(r.Body), `"disabled_reason":""`) {
		t.Fatalf("GET endpoints: %s", r.Body)
	}
}
