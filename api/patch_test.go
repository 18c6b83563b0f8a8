package api_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/expd/expd/internal/testenv"
)

const mergePatch = "application/merge-patch+json"

type patchedBody struct {
	experimentBody
	Description string `json:"description"`
	Metrics     []struct {
		Name      string `json:"name"`
		Goal      string `json:"goal"`
		Guardrail *struct {
			BadDirection string `json:"bad_direction"`
		} `json:"guardrail"`
		NonInferiorityMargin *struct {
			BadDirection string `json:"bad_direction"`
		} `json:"non_inferiority_margin"`
	} `json:"metrics"`
}

func patch(t *testing.T, env *testenv.Env, org testenv.Org, id, body string, headers ...string) testenv.Response {
	t.Helper()
	h := append([]string{"Content-Type", mergePatch}, testenv.Bearer(org.AdminToken)...)
	return env.Do(t, "PATCH", "/v1/experiments/"+id, body, append(h, headers...)...)
}

// PATCH merges: an object member changes, null removes an optional field,
// arrays are replaced whole, the rest of the config is kept; each patch
// mints a version like PUT, and salt and bucket_count stay frozen.
func TestPatchExperimentMergesAndMintsAVersion(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	cfg := validConfig("patch-merge")
	cfg["description"] = "two prompts"
	e := create(t, env, org, cfg)

	r := patch(t, env, org, e.ID, `{"allocation": [{"variant": "control", "weight": 60}, {"variant": "concise", "weight": 40}],
		"variants": {"concise": {"variables": null}}, "description": null}`)
	var got patchedBody
	r.ExpectJSON(t, http.StatusOK, &got)
	if got.Version != 2 || got.Salt != "k3J9x2pQ" || got.BucketCount != 10000 || r.Header.Get("ETag") != `"2"` {
		t.Fatalf("version %d salt %q bucket_count %d etag %q", got.Version, got.Salt, got.BucketCount, r.Header.Get("ETag"))
	}
	if len(got.Allocation) != 2 || got.Allocation[0].Weight != 60 || got.Allocation[1].Weight != 40 {
		t.Fatalf("allocation not replaced: %+v", got.Allocation)
	}
	if got.Description != "" || got.Variants["concise"].Variables != nil || got.Variants["concise"].Prompt != "Answer in two sentences." {
		t.Fatalf("null did not remove just the named fields: description %q, concise %+v", got.Description, got.Variants["concise"])
	}
	if got.Variants["control"].Variables["temperature"] != 0.7 || len(got.Metrics) != 2 {
		t.Fatalf("untouched fields changed: control %+v, %d metrics", got.Variants["control"], len(got.Metrics))
	}

	// One metric changed: the metrics array is sent whole (RFC 7396).
	r = patch(t, env, org, e.ID, `{"metrics": [{"name": "conversion", "kind": "proportion", "category": "primary", "method_default": "z_test",
		"metric_version": 1, "shared_org_wide": false, "goal": "increase", "source": {"event_type": "business_event", "business_metric": "conversion"}}]}`)
	r.ExpectJSON(t, http.StatusOK, &got)
	if got.Version != 3 || len(got.Metrics) != 1 || got.Metrics[0].Goal != "increase" {
		t.Fatalf("metrics not replaced whole: version %d %+v", got.Version, got.Metrics)
	}

	for field, body := range map[string]string{
		"salt":         `{"salt": "another-salt"}`,
		"bucket_count": `{"bucket_count": 500}`,
	} {
		p := testenv.ExpectProblem(t, patch(t, env, org, e.ID, body), http.StatusBadRequest)
		if !p.HasFieldError(field) {
			t.Errorf("%s: problem %+v does not name %s", body, p, field)
		}
	}
	var now experimentBody
	env.Do(t, "GET", "/v1/experiments/"+e.ID, nil, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusOK, &now)
	if now.Version != 3 || now.Salt != "k3J9x2pQ" || now.BucketCount != 10000 {
		t.Fatalf("a refused patch wrote something: %+v", now)
	}
}

// If-Match makes a patch conditional on the version read; a wrong content
// type is a 415; a patch whose result is invalid is a 400 naming the
// field, and nothing is written.
func TestPatchExperimentRefusals(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	e := create(t, env, org, validConfig("patch-refusals"))
	get := env.Do(t, "GET", "/v1/experiments/"+e.ID, nil, testenv.Bearer(org.AdminToken)...)
	etag := get.Header.Get("ETag")
	if etag != `"1"` {
		t.Fatalf("GET ETag %q, want \"1\"", etag)
	}
	if r := patch(t, env, org, e.ID, `{"description": "first"}`, "If-Match", etag); r.Status != http.StatusOK {
		t.Fatalf("conditional patch on the current version: %d %s", r.Status, r.Body)
	}
	p := testenv.ExpectProblem(t, patch(t, env, org, e.ID, `{"description": "second"}`, "If-Match", etag), http.StatusPreconditionFailed)
	if p.Code != "version_mismatch" {
		t.Fatalf("stale If-Match: %+v", p)
	}
	p = testenv.ExpectProblem(t, patch(t, env, org, e.ID, `{"description": "x"}`, "If-Match", "yesterday"), http.StatusBadRequest)
	if !p.HasFieldError("If-Match") {
		t.Fatalf("malformed If-Match: %+v", p)
	}
	r := env.Do(t, "PATCH", "/v1/experiments/"+e.ID, `{"description": "x"}`, testenv.Bearer(org.AdminToken)...) // application/json
	if p := testenv.ExpectProblem(t, r, http.StatusUnsupportedMediaType); p.Code != "unsupported_media_type" {
		t.Fatalf("wrong content type: %+v", p)
	}
	for field, body := range map[string]string{
		"allocation":           `{"allocation": null}`,
		"metrics[0].kind":      `{"metrics": [{"name": "m", "kind": "median", "category": "primary", "method_default": "welch_t", "metric_version": 1, "shared_org_wide": false}]}`,
		"allocation[0].weight": `{"allocation": [{"variant": "control", "weight": -1}, {"variant": "concise", "weight": 1}]}`,
		"metrics[0].goal":      `{"metrics": [{"name": "latency_ms", "kind": "mean", "category": "guardrail", "method_default": "welch_t", "metric_version": 1, "shared_org_wide": false, "goal": "lower"}]}`,
	} {
		p := testenv.ExpectProblem(t, patch(t, env, org, e.ID, body), http.StatusBadRequest)
		if !p.HasFieldError(field) {
			t.Errorf("%s: problem %+v does not name %s", body, p, field)
		}
	}
	p = testenv.ExpectProblem(t, patch(t, env, org, e.ID, `[1]`), http.StatusBadRequest)
	if p.Code == "" {
		t.Fatalf("array patch: %+v", p)
	}
	var now experimentBody
	env.Do(t, "GET", "/v1/experiments/"+e.ID, nil, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusOK, &now)
	if now.Version != 2 {
		t.Fatalf("refused patches minted versions: now %d, want 2", now.Version)
	}
	if r := patch(t, env, org, "no-such-experiment", `{"description": "x"}`); r.Status != http.StatusNotFound {
		t.Fatalf("unknown experiment: %d", r.Status)
	}
}

// A metric's goal: built-ins carry theirs, a guardrail's or margin's
// bad_direction defaults to the opposite, a contradicting pair or a bad
// value is a 400 naming the field.
func TestMetricGoalDefaultsAndContradictions(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	cfg := validConfig("goals")
	cfg["metrics"] = []map[string]any{
		{"name": "latency_ms", "kind": "mean", "category": "guardrail", "method_default": "welch_t", "metric_version": 1, "shared_org_wide": false,
			"guardrail": map[string]any{"max_change": 0.1, "relative": true, "action": "stop"}},
		{"name": "toxicity", "kind": "mean", "category": "guardrail", "method_default": "welch_t", "metric_version": 1, "shared_org_wide": false,
			"goal": "decrease", "source": map[string]any{"event_type": "score", "score": "toxicity"},
			"non_inferiority_margin": map[string]any{"value": 0.01, "type": "absolute"}},
		{"name": "helpfulness", "kind": "mean", "category": "primary", "method_default": "welch_t", "metric_version": 1, "shared_org_wide": false,
			"source": map[string]any{"event_type": "score", "score": "helpfulness"}},
	}
	var got patchedBody
	env.Do(t, "POST", "/v1/experiments", cfg, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusCreated, &got)
	if m := got.Metrics[0]; m.Goal != "decrease" || m.Guardrail == nil || m.Guardrail.BadDirection != "increase" {
		t.Fatalf("built-in latency_ms: goal %q guardrail %+v", m.Goal, m.Guardrail)
	}
	if m := got.Metrics[1]; m.NonInferiorityMargin == nil || m.NonInferiorityMargin.BadDirection != "increase" {
		t.Fatalf("score metric with goal decrease: margin %+v", m.NonInferiorityMargin)
	}
	if got.Metrics[2].Goal != "" {
		t.Fatalf("a score metric has no default goal, got %q", got.Metrics[2].Goal)
	}

	for i, c := range []struct {
		metric map[string]any
		field  string
	}{
		{map[string]any{"goal": "decrease", "guardrail": map[string]any{"bad_direction": "decrease", "max_change": 0, "action": "alert"}}, "metrics[0].guardrail.bad_direction"},
		{map[string]any{"goal": "increase", "non_inferiority_margin": map[string]any{"value": 1, "type": "absolute", "bad_direction": "increase"}}, "metrics[0].non_inferiority_margin.bad_direction"},
		{map[string]any{"guardrail": map[string]any{"max_change": 0, "action": "alert"}}, "metrics[0].guardrail.bad_direction"},
		{map[string]any{"goal": "up"}, "metrics[0].goal"},
		{map[string]any{"goal": "increase", "guardrail": map[string]any{"bad_direction": "sideways", "max_change": 0, "action": "alert"}}, "metrics[0].guardrail.bad_direction"},
		{map[string]any{"mde": -0.1}, "metrics[0].mde"},
	} {
		m := map[string]any{"name": "score_" + strconv.Itoa(i), "kind": "mean", "category": "primary", "method_default": "welch_t", "metric_version": 1,
			"shared_org_wide": false, "source": map[string]any{"event_type": "score", "score": "s"}}
		for k, v := range c.metric {
			m[k] = v
		}
		bad := validConfig("goals-bad-" + strconv.Itoa(i))
		bad["metrics"] = []map[string]any{m}
		p := testenv.ExpectProblem(t, env.Do(t, "POST", "/v1/experiments", bad, testenv.Bearer(org.AdminToken)...), http.StatusBadRequest)
		if !p.HasFieldError(c.field) {
			t.Errorf("case %d: problem %+v does not name %s", i, p.Errors, c.field)
		}
	}
}
