package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/expd/expd/internal/testenv"
)

// Bad input that PostgreSQL cannot hold is refused the same way on both
// databases: NUL in a variant's prompt or variables is a 400 naming the
// field, an id with NUL (or anything no id or name can be) is the 404 of
// an unknown experiment on every experiment route, and a version beyond
// the stored 32-bit range is a 400.
func TestBadInputRefusedAlikeOnBothDatabases(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	exp := create(t, env, org, validConfig("bad-input"))

	nul := map[string]struct {
		variant map[string]any
		field   string
	}{
		"prompt":          {map[string]any{"prompt": "a\x00b"}, "variants.concise.prompt"},
		"variable value":  {map[string]any{"variables": map[string]any{"tone": "x\x00"}}, "variables.tone"},
		"nested variable": {map[string]any{"variables": map[string]any{"list": []any{"ok", map[string]any{"k": "\x00"}}}}, "variables.list[1].k"},
		"variable key":    {map[string]any{"variables": map[string]any{"a\x00": 1}}, "variables.a"},
	}
	for name, tc := range nul {
		for _, method := range []string{http.MethodPost, http.MethodPut} {
			t.Run(name+" "+method, func(t *testing.T) {
				cfg := roundTrip(t, validConfig("nul-"+name))
				cfg["name"] = "nul-check"
				cfg["variants"].(map[string]any)["concise"] = tc.variant
				path := "/v1/experiments"
				if method == http.MethodPut {
					path += "/" + exp.ID
					cfg["name"] = "bad-input"
				}
				p := testenv.ExpectProblem(t, env.Do(t, method, path, cfg, admin...), http.StatusBadRequest)
				found := false
				for _, f := range p.Errors {
					found = found || strings.Contains(f.Field, tc.field)
				}
				if !found {
					t.Fatalf("no field error naming %s: %+v", tc.field, p)
				}
			})
		}
	}

	for _, id := range []string{"%00", "a%00b", exp.ID + "%00", "%FF%FE", "x%20y"} {
		for _, r := range []struct{ method, suffix string }{
			{http.MethodGet, ""}, {http.MethodPut, ""}, {http.MethodGet, "/versions/1"}, {http.MethodGet, "/events"},
			{http.MethodGet, "/traffic"}, {http.MethodGet, "/results"}, {http.MethodPost, "/runs"}, {http.MethodGet, "/runs/2025-01-01"},
		} {
			var body any
			if r.method == http.MethodPut {
				body = validConfig("bad-input")
			}
			resp := env.Do(t, r.method, "/v1/experiments/"+id+r.suffix, body, admin...)
			if resp.Status != http.StatusNotFound {
				t.Errorf("%s /v1/experiments/%s%s: %d %s, want 404", r.method, id, r.suffix, resp.Status, resp.Body)
			}
		}
	}

	for v, want := range map[string]int{"2147483648": 400, "99999999999999999999": 400, "-1": 400, "0": 400, "2147483647": 404, "1": 200} {
		if resp := env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID+"/versions/"+v, nil, admin...); resp.Status != want {
			t.Errorf("version %s: %d %s, want %d", v, resp.Status, resp.Body, want)
		}
	}
}
