package api_test

import (
	"net/http"
	"testing"

	"github.com/expd/expd/api"
	"github.com/expd/expd/internal/testenv"
)

// A browser on the dashboard's origin may call dashboard routes with
// credentials; any other origin's preflight is refused and its responses
// carry no CORS grant. SDK routes are left alone.
func TestDashboardCORS(t *testing.T) {
	const dashboard = "https://app.example.com"
	env := testenv.New(t, func(d *api.Deps) { d.DashboardOrigins = []string{dashboard} })
	org := env.NewOrg(t)
	preflight := func(origin, path string) testenv.Response {
		return env.Do(t, http.MethodOptions, path, nil, "Origin", origin,
			"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization,content-type")
	}

	r := preflight(dashboard, "/v1/experiments")
	if r.Status != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != dashboard ||
		r.Header.Get("Access-Control-Allow-Credentials") != "true" || r.Header.Get("Access-Control-Allow-Headers") == "" {
		t.Fatalf("allowed preflight: %d %v", r.Status, r.Header)
	}
	r = env.Do(t, http.MethodGet, "/v1/experiments", nil, append(testenv.Bearer(org.AdminToken), "Origin", dashboard)...)
	if r.Status != http.StatusOK || r.Header.Get("Access-Control-Allow-Origin") != dashboard || r.Header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Fatalf("allowed request: %d %v", r.Status, r.Header)
	}

	const evil = "https://evil.example.com"
	r = preflight(evil, "/v1/experiments")
	if p := testenv.ExpectProblem(t, r, http.StatusForbidden); p.Code != api.CodeOriginNotAllowed || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("refused preflight: code %q headers %v", p.Code, r.Header)
	}
	r = env.Do(t, http.MethodGet, "/v1/experiments", nil, append(testenv.Bearer(org.AdminToken), "Origin", evil)...)
	if r.Header.Get("Access-Control-Allow-Origin") != "" || r.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("other origin granted: %v", r.Header)
	}
	// SDK routes are not dashboard routes: no grant, even to the dashboard.
	r = env.Do(t, http.MethodGet, "/v1/config", nil, append(testenv.APIKey(org.PublishableKey), "Origin", dashboard)...)
	if r.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("SDK route granted credentials: %v", r.Header)
	}
}
