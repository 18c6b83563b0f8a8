package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/internal/testenv"
)

func validConfig(name string) map[string]any {
	return map[string]any{
		"name":         name,
		"salt":         "k3J9x2pQ",
		"bucket_count": 10000,
		"allocation":   []map[string]any{{"variant": "control", "weight": 50}, {"variant": "concise", "weight": 50}},
		"variants": map[string]any{
			"control": map[string]any{"prompt": "You are a helpful support agent.", "variables": map[string]any{"temperature": 0.7}},
			"concise": map[string]any{"prompt": "Answer in two sentences.", "variables": map[string]any{"temperature": 0.3}},
		},
		"metrics": []map[string]any{
			{"name": "latency_ms", "kind": "mean", "category": "guardrail", "method_default": "welch_t", "metric_version": 1, "shared_org_wide": false,
				"source": map[string]any{"event_type": "model_call", "field": "latency_ms"}},
			{"name": "conversion", "kind": "proportion", "category": "primary", "method_default": "z_test", "metric_version": 1, "shared_org_wide": false,
				"source": map[string]any{"event_type": "business_event", "business_metric": "conversion"}},
		},
	}
}

type experimentBody struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Version       int    `json:"version"`
	Status        string `json:"status"`
	Salt          string `json:"salt"`
	BucketCount   int    `json:"bucket_count"`
	ConfigVersion int64  `json:"config_version"`
	CreatedAt     string `json:"created_at"`
	UpdatedAt     string `json:"updated_at"`
	Allocation    []struct {
		Variant string  `json:"variant"`
		Weight  float64 `json:"weight"`
	} `json:"allocation"`
	BucketMap []struct {
		Variant    string `json:"variant"`
		Start, End int
	} `json:"bucket_map"`
	Variants map[string]struct {
		Prompt    string         `json:"prompt"`
		Variables map[string]any `json:"variables"`
	} `json:"variants"`
}

func create(t *testing.T, env *testenv.Env, org testenv.Org, cfg map[string]any) experimentBody {
	t.Helper()
	var e experimentBody
	env.Do(t, "POST", "/v1/experiments", cfg, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusCreated, &e)
	return e
}

func TestCreateGetListExperiment(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	e := create(t, env, org, validConfig("support-bot-prompt"))
	if e.ID == "" || e.Version != 1 || e.Status != "running" || e.Salt != "k3J9x2pQ" || e.BucketCount != 10000 {
		t.Fatalf("created experiment: %+v", e)
	}
	if e.CreatedAt == "" || e.UpdatedAt == "" || e.ConfigVersion != 1 {
		t.Fatalf("timestamps/config_version missing: %+v", e)
	}
	if len(e.BucketMap) != 2 || e.BucketMap[0].End != 5000 || e.BucketMap[1].Start != 5000 || e.BucketMap[1].End != 10000 {
		t.Fatalf("bucket map: %+v", e.BucketMap)
	}
	if e.Variants["concise"].Prompt != "Answer in two sentences." || e.Variants["control"].Variables["temperature"] != 0.7 {
		t.Fatalf("variants: %+v", e.Variants)
	}
	for _, ref := range []string{e.ID, "support-bot-prompt"} {
		r := env.Do(t, "GET", "/v1/experiments/"+ref, nil, testenv.Bearer(org.MemberToken)...)
		var got experimentBody
		r.JSON(t, &got)
		if r.Status != 200 || got.ID != e.ID || got.Version != 1 {
			t.Fatalf("get %s: %d %+v", ref, r.Status, got)
		}
	}
	create(t, env, org, validConfig("second"))
	r := env.Do(t, "GET", "/v1/experiments", nil, testenv.Bearer(org.MemberToken)...)
	var list struct{ Experiments []experimentBody }
	r.JSON(t, &list)
	if r.Status != 200 || len(list.Experiments) != 2 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	names := map[string]bool{}
	for _, x := range list.Experiments {
		names[x.Name] = true
	}
	if !names["second"] || !names["support-bot-prompt"] {
		t.Fatalf("list names: %v", names)
	}
}

func TestUpdateMintsVersionsAndKeepsStoredOnes(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	e := create(t, env, org, validConfig("exp"))
	for v := 2; v <= 4; v++ {
		cfg := validConfig("exp")
		delete(cfg, "salt")
		delete(cfg, "bucket_count")
		cfg["variants"] = map[string]any{"control": map[string]any{"prompt": fmt.Sprintf("prompt v%d", v)}}
		cfg["allocation"] = []map[string]any{{"variant": "control", "weight": 40 + 10*(v-1)}, {"variant": "concise", "weight": 60 - 10*(v-1)}}
		r := env.Do(t, "PUT", "/v1/experiments/"+e.ID, cfg, testenv.Bearer(org.AdminToken)...)
		var got experimentBody
		r.JSON(t, &got)
		if r.Status != 200 || got.Version != v || got.Salt != "k3J9x2pQ" || got.BucketCount != 10000 || got.ConfigVersion != int64(v) {
			t.Fatalf("PUT v%d: %d %s", v, r.Status, r.Body)
		}
	}
	r := env.Do(t, "GET", "/v1/experiments/exp", nil, testenv.Bearer(org.AdminToken)...)
	var latest experimentBody
	r.JSON(t, &latest)
	if latest.Version != 4 || latest.Variants["control"].Prompt != "prompt v4" {
		t.Fatalf("latest: %+v", latest)
	}
	// Stored versions stay as they were written.
	r = env.Do(t, "GET", "/v1/experiments/exp/versions/2", nil, testenv.Bearer(org.AdminToken)...)
	var v2 experimentBody
	r.JSON(t, &v2)
	if r.Status != 200 || v2.Version != 2 || v2.Variants["control"].Prompt != "prompt v2" || v2.Allocation[0].Weight != 50 {
		t.Fatalf("version 2: %d %s", r.Status, r.Body)
	}
	r = env.Do(t, "GET", "/v1/experiments/exp/versions/1", nil, testenv.Bearer(org.AdminToken)...)
	var v1 experimentBody
	r.JSON(t, &v1)
	if v1.Variants["control"].Prompt != "You are a helpful support agent." {
		t.Fatalf("version 1 rewritten: %s", r.Body)
	}
	testenv.ExpectProblem(t, env.Do(t, "GET", "/v1/experiments/exp/versions/9", nil, testenv.Bearer(org.AdminToken)...), 404)
	// Salt and bucket_count are frozen.
	for field, val := range map[string]any{"salt": "otherSALT1", "bucket_count": 100} {
		cfg := validConfig("exp")
		cfg[field] = val
		p := testenv.ExpectProblem(t, env.Do(t, "PUT", "/v1/experiments/"+e.ID, cfg, testenv.Bearer(org.AdminToken)...), 400)
		if !p.HasFieldError(field) {
			t.Fatalf("PUT changing %s: %+v", field, p)
		}
	}
}

func TestExperimentValidation(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	cases := []struct {
		name  string
		edit  func(map[string]any)
		field string
	}{
		{"missing name", func(c map[string]any) { delete(c, "name") }, "name"},
		{"uuid name", func(c map[string]any) { c["name"] = "0b5f3a52-7d6c-4c1e-9d8e-2f1a3b4c5d6e" }, "name"},
		{"bad name chars", func(c map[string]any) { c["name"] = "has space" }, "name"},
		{"long name", func(c map[string]any) { c["name"] = strings.Repeat("a", 129) }, "name"},
		{"missing salt", func(c map[string]any) { delete(c, "salt") }, "salt"},
		{"short salt", func(c map[string]any) { c["salt"] = "abc" }, "salt"},
		{"salt charset", func(c map[string]any) { c["salt"] = "abc def ghi" }, "salt"},
		{"missing bucket_count", func(c map[string]any) { delete(c, "bucket_count") }, "bucket_count"},
		{"bucket_count too big", func(c map[string]any) { c["bucket_count"] = 1_000_001 }, "bucket_count"},
		{"bucket_count negative", func(c map[string]any) { c["bucket_count"] = -5 }, "bucket_count"},
		{"bucket_count string", func(c map[string]any) { c["bucket_count"] = "100" }, "bucket_count"},
		{"missing allocation", func(c map[string]any) { delete(c, "allocation") }, "allocation"},
		{"empty allocation", func(c map[string]any) { c["allocation"] = []any{} }, "allocation"},
		{"negative weight", func(c map[string]any) {
			c["allocation"] = []map[string]any{{"variant": "control", "weight": -1}, {"variant": "b", "weight": 2}}
		}, "allocation[0].weight"},
		{"zero sum", func(c map[string]any) {
			c["allocation"] = []map[string]any{{"variant": "control", "weight": 0}, {"variant": "b", "weight": 0}}
		}, "allocation"},
		{"duplicate variant", func(c map[string]any) {
			c["allocation"] = []map[string]any{{"variant": "a", "weight": 1}, {"variant": "a", "weight": 1}}
			delete(c, "variants")
		}, "allocation[1].variant"},
		{"too many variants", func(c map[string]any) {
			var a []map[string]any
			for i := 0; i < 21; i++ {
				a = append(a, map[string]any{"variant": fmt.Sprintf("v%d", i), "weight": 1})
			}
			c["allocation"] = a
			delete(c, "variants")
		}, "allocation"},
		{"unknown control", func(c map[string]any) { c["control"] = "nope" }, "control"},
		{"variant not allocated", func(c map[string]any) { c["variants"] = map[string]any{"ghost": map[string]any{"prompt": "x"}} }, "variants.ghost"},
		{"missing metrics", func(c map[string]any) { delete(c, "metrics") }, "metrics"},
		{"bad kind", func(c map[string]any) { metric(c)["kind"] = "median" }, "metrics[0].kind"},
		{"bad category", func(c map[string]any) { metric(c)["category"] = "vanity" }, "metrics[0].category"},
		{"bad method", func(c map[string]any) { metric(c)["method_default"] = "anova" }, "metrics[0].method_default"},
		{"z_test on mean", func(c map[string]any) { metric(c)["method_default"] = "z_test" }, "metrics[0].method_default"},
		{"metric_version 0", func(c map[string]any) { metric(c)["metric_version"] = 0 }, "metrics[0].metric_version"},
		{"missing shared_org_wide", func(c map[string]any) { delete(metric(c), "shared_org_wide") }, "metrics[0].shared_org_wide"},
		{"shared_org_wide string", func(c map[string]any) { metric(c)["shared_org_wide"] = "no" }, "metrics.shared_org_wide"},
		{"bad source field", func(c map[string]any) {
			metric(c)["source"] = map[string]any{"event_type": "model_call", "field": "mood"}
		}, "metrics[0].source.field"},
		{"status", func(c map[string]any) { c["status"] = "paused" }, "status"},
		{"status shipped", func(c map[string]any) { c["status"] = "shipped" }, "status"},
		{"stop_at before start_at", func(c map[string]any) {
			c["start_at"], c["stop_at"] = "2030-01-02T00:00:00Z", "2030-01-01T00:00:00Z"
		}, "stop_at"},
		{"start_at not an instant", func(c map[string]any) { c["start_at"] = "tomorrow" }, "start_at"},
		{"stop_at a number", func(c map[string]any) { c["stop_at"] = 1700000000 }, "stop_at"},
		{"guardrail direction", func(c map[string]any) {
			metric(c)["guardrail"] = map[string]any{"bad_direction": "sideways", "max_change": 0.05, "relative": true, "action": "stop"}
		}, "metrics[0].guardrail.bad_direction"},
		{"guardrail action", func(c map[string]any) {
			metric(c)["guardrail"] = map[string]any{"bad_direction": "increase", "max_change": 0.05, "action": "page"}
		}, "metrics[0].guardrail.action"},
		{"guardrail negative change", func(c map[string]any) {
			metric(c)["guardrail"] = map[string]any{"bad_direction": "increase", "max_change": -1, "action": "stop"}
		}, "metrics[0].guardrail.max_change"},
		{"guardrail huge change", func(c map[string]any) {
			metric(c)["guardrail"] = map[string]any{"bad_direction": "increase", "max_change": 1e300, "action": "stop"}
		}, "metrics[0].guardrail.max_change"},
		{"guardrail change as text", func(c map[string]any) {
			metric(c)["guardrail"] = map[string]any{"bad_direction": "increase", "max_change": "5%", "action": "stop"}
		}, "metrics.guardrail.max_change"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := validConfig("v-" + strings.ReplaceAll(tc.name, " ", "-"))
			tc.edit(cfg)
			p := testenv.ExpectProblem(t, env.Do(t, "POST", "/v1/experiments", cfg, testenv.Bearer(org.AdminToken)...), 400)
			if !p.HasFieldError(tc.field) {
				t.Fatalf("want error on %q, got %+v", tc.field, p.Errors)
			}
		})
	}
	// Nothing was half-written.
	r := env.Do(t, "GET", "/v1/experiments", nil, testenv.Bearer(org.AdminToken)...)
	var list struct{ Experiments []experimentBody }
	r.JSON(t, &list)
	if len(list.Experiments) != 0 {
		t.Fatalf("invalid configs were stored: %s", r.Body)
	}
	// A duplicate name is a 400 naming the field.
	create(t, env, org, validConfig("dup"))
	p := testenv.ExpectProblem(t, env.Do(t, "POST", "/v1/experiments", validConfig("dup"), testenv.Bearer(org.AdminToken)...), 400)
	if !p.HasFieldError("name") {
		t.Fatalf("duplicate name: %+v", p)
	}
}

func metric(c map[string]any) map[string]any { return c["metrics"].([]map[string]any)[0] }

func TestMalformedAndOversizedBodies(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	e := create(t, env, org, validConfig("exp"))
	for _, path := range []string{"/v1/experiments", "/v1/experiments/" + e.ID} {
		method := "POST"
		if path != "/v1/experiments" {
			method = "PUT"
		}
		p := testenv.ExpectProblem(t, env.Do(t, method, path, `{"name": "x",`, testenv.Bearer(org.AdminToken)...), 400)
		if p.Code != "malformed_json" {
			t.Fatalf("%s malformed: %+v", method, p)
		}
		testenv.ExpectProblem(t, env.Do(t, method, path, `[1,2]`, testenv.Bearer(org.AdminToken)...), 400)
		testenv.ExpectProblem(t, env.Do(t, method, path, `{"name":"a"} {"name":"b"}`, testenv.Bearer(org.AdminToken)...), 400)
		big := `{"name":"x","description":"` + strings.Repeat("a", 2<<20) + `"}`
		p = testenv.ExpectProblem(t, env.Do(t, method, path, big, testenv.Bearer(org.AdminToken)...), 413)
		if p.Code != "body_too_large" {
			t.Fatalf("413 code: %+v", p)
		}
	}
}

func TestExperimentsAuth(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	other := env.NewOrg(t)
	e := create(t, env, org, validConfig("mine"))

	stranger, err := auth.NewSigner()
	if err != nil {
		t.Fatal(err)
	}
	expired := testenv.Token(t, env.Signer, auth.Session{UserID: "u", OrgID: org.ClerkOrgID, Role: auth.AdminRole}, -time.Hour)
	wrongKey := testenv.Token(t, stranger, auth.Session{UserID: "u", OrgID: org.ClerkOrgID, Role: auth.AdminRole}, time.Hour)
	noOrg := testenv.Token(t, env.Signer, auth.Session{UserID: "u"}, time.Hour)
	bad := map[string][]string{
		"missing":        nil,
		"not bearer":     {"Authorization", "Basic dXNlcjpwYXNz"},
		"malformed":      testenv.Bearer("not.a.jwt"),
		"expired":        testenv.Bearer(expired),
		"wrong key":      testenv.Bearer(wrongKey),
		"no org":         testenv.Bearer(noOrg),
		"api key in jwt": testenv.Bearer(org.SecretKey),
		"api key header": testenv.APIKey(org.SecretKey),
	}
	routes := [][2]string{{"GET", "/v1/experiments"}, {"POST", "/v1/experiments"}, {"GET", "/v1/experiments/" + e.ID}, {"PUT", "/v1/experiments/" + e.ID}}
	for name, hdr := range bad {
		for _, rt := range routes {
			p := testenv.ExpectProblem(t, env.Do(t, rt[0], rt[1], validConfig("x"), hdr...), 401)
			if p.Code != "unauthorized" {
				t.Fatalf("%s %v: %+v", name, rt, p)
			}
		}
	}
	// Another org's id and name are the same 404 as an unknown one.
	for _, ref := range []string{e.ID, "mine", "0b5f3a52-7d6c-4c1e-9d8e-2f1a3b4c5d6e"} {
		testenv.ExpectProblem(t, env.Do(t, "GET", "/v1/experiments/"+ref, nil, testenv.Bearer(other.AdminToken)...), 404)
		testenv.ExpectProblem(t, env.Do(t, "PUT", "/v1/experiments/"+ref, validConfig("mine"), testenv.Bearer(other.AdminToken)...), 404)
	}
	r := env.Do(t, "GET", "/v1/experiments", nil, testenv.Bearer(other.AdminToken)...)
	if r.Status != 200 || strings.Contains(string(r.Body), e.ID) {
		t.Fatalf("other org sees experiment: %s", r.Body)
	}
	// The other org's failed PUT did not touch ours.
	r = env.Do(t, "GET", "/v1/experiments/"+e.ID, nil, testenv.Bearer(org.AdminToken)...)
	var got experimentBody
	r.JSON(t, &got)
	if got.Version != 1 {
		t.Fatalf("version changed by another org: %+v", got)
	}
}

func TestUnknownRouteAndMethodAreProblems(t *testing.T) {
	env := testenv.New(t)
	testenv.ExpectProblem(t, env.Do(t, "GET", "/v1/nope", nil), 404)
	testenv.ExpectProblem(t, env.Do(t, "DELETE", "/v1/experiments", nil), 405)
	r := env.Do(t, "GET", "/healthz", nil)
	if r.Status != 200 || r.Header.Get("X-Request-Id") == "" {
		t.Fatalf("healthz: %d %v", r.Status, r.Header)
	}
	// No Temporal client configured: not ready, as a problem.
	testenv.ExpectProblem(t, env.Do(t, "GET", "/readyz", nil), 503)
}
