package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/expd/expd/api"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/sdkcache"
)

type privacyBody struct {
	PayloadPolicy  string `json:"payload_policy"`
	CustomPatterns []struct {
		Name, Regex, Placeholder string
	} `json:"custom_patterns"`
	RetentionDays     *int     `json:"retention_days"`
	PlanRetentionDays int      `json:"plan_retention_days"`
	BuiltinDetectors  []string `json:"builtin_detectors"`
	UpdatedBy         string   `json:"updated_by"`
}

// withSecrets configures a fresh EXPD_SECRETS_KEY (the hash policy needs
// one), for the routes and the SDK cache that builds the ingest policy.
func withSecrets(t *testing.T) func(*api.Deps) {
	ring := testenv.NewKeyring(t)
	return func(d *api.Deps) {
		d.Secrets = ring
		d.SDK = sdkcache.New(d.DB, sdkcache.Options{MaxAge: testMaxAge, Secrets: ring})
	}
}

func getPrivacy(t *testing.T, env *testenv.Env, org testenv.Org) privacyBody {
	t.Helper()
	var b privacyBody
	env.Do(t, http.MethodGet, "/v1/privacy", nil, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusOK, &b)
	return b
}

func putPrivacy(t *testing.T, env *testenv.Env, org testenv.Org, body any) privacyBody {
	t.Helper()
	var b privacyBody
	env.Do(t, http.MethodPut, "/v1/privacy", body, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusOK, &b)
	return b
}

// An org starts on store (the v1 contract); PUT replaces the settings,
// GET reads them back, the audit log records the change, another org
// keeps its own, and the change raises config_version.
func TestPrivacySettingsRoundTrip(t *testing.T) {
	env := newSDKEnv(t, withSecrets(t))
	org, other := env.NewOrg(t), env.NewOrg(t)
	def := getPrivacy(t, env, org)
	if def.PayloadPolicy != "store" || len(def.CustomPatterns) != 0 || def.RetentionDays != nil || def.PlanRetentionDays != 30 ||
		len(def.BuiltinDetectors) < 10 || def.BuiltinDetectors[0] != "private_key" {
		t.Fatalf("defaults %+v", def)
	}
	before := configVersion(t, env, org)
	got := putPrivacy(t, env, org, map[string]any{"payload_policy": "redact", "retention_days": 7,
		"custom_patterns": []map[string]any{{"name": "employee", "regex": "EMP-[0-9]{6}", "placeholder": "[EMPLOYEE]"}}})
	if got.PayloadPolicy != "redact" || got.RetentionDays == nil || *got.RetentionDays != 7 || len(got.CustomPatterns) != 1 ||
		got.CustomPatterns[0].Placeholder != "[EMPLOYEE]" || got.UpdatedBy == "" {
		t.Fatalf("PUT answered %+v", got)
	}
	if read := getPrivacy(t, env, org); read.PayloadPolicy != "redact" || len(read.CustomPatterns) != 1 || *read.RetentionDays != 7 {
		t.Fatalf("GET after PUT %+v", read)
	}
	if after := configVersion(t, env, org); after != before+1 {
		t.Errorf("config_version %d -> %d, want one step: every instance rebuilds its cached policy", before, after)
	}
	if o := getPrivacy(t, env, other); o.PayloadPolicy != "store" || len(o.CustomPatterns) != 0 {
		t.Errorf("another org's settings changed: %+v", o)
	}
	// A field left out takes its default.
	if got := putPrivacy(t, env, org, map[string]any{"payload_policy": "hash"}); got.PayloadPolicy != "hash" || got.RetentionDays != nil || len(got.CustomPatterns) != 0 {
		t.Fatalf("second PUT %+v", got)
	}
	var page struct {
		Entries []struct {
			Action, Actor, Summary string
		} `json:"entries"`
	}
	env.Do(t, http.MethodGet, "/v1/audit?action=privacy.updated", nil, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusOK, &page)
	if len(page.Entries) != 2 || !strings.Contains(page.Entries[0].Summary, "payload policy hash") ||
		!strings.Contains(page.Entries[1].Summary, "payload policy redact, 1 custom pattern(s), retention 7 days") {
		t.Errorf("audit entries %+v", page.Entries)
	}
}

func configVersion(t *testing.T, env *testenv.Env, org testenv.Org) int64 {
	t.Helper()
	var v int64
	if err := env.DB.Raw("SELECT config_version FROM orgs WHERE id = ?", org.ID).Scan(&v).Error; err != nil {
		t.Fatal(err)
	}
	return v
}

// Bad input on PUT /v1/privacy is a problem naming the field, and leaves
// the settings and the audit log as they were.
func TestPrivacyBadInput(t *testing.T) {
	env := newSDKEnv(t)
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	putPrivacy(t, env, org, map[string]any{"payload_policy": "redact"})
	pattern := func(name, regex, placeholder string) map[string]any {
		return map[string]any{"payload_policy": "redact", "custom_patterns": []map[string]any{{"name": "ok", "regex": "x"}, {"name": name, "regex": regex, "placeholder": placeholder}}}
	}
	for name, tc := range map[string]struct {
		body   any
		status int
		code   string
		field  string
	}{
		"malformed json":       {`{"payload_policy":`, 400, "malformed_json", ""},
		"two objects":          {`{"payload_policy":"drop"} {}`, 400, "malformed_json", ""},
		"not an object":        {`["drop"]`, 400, "malformed_json", ""},
		"policy wrong type":    {`{"payload_policy": 5}`, 400, "validation_failed", "payload_policy"},
		"policy missing":       {map[string]any{"retention_days": 5}, 400, "validation_failed", "payload_policy"},
		"unknown policy":       {map[string]any{"payload_policy": "encrypt"}, 400, "validation_failed", "payload_policy"},
		"policy with NUL":      {map[string]any{"payload_policy": "drop\x00"}, 400, "validation_failed", "payload_policy"},
		"invalid RE2":          {pattern("bad", "(unclosed", ""), 400, "validation_failed", "custom_patterns[1].regex"},
		"perl lookahead":       {pattern("bad", "a(?=b)", ""), 400, "validation_failed", "custom_patterns[1].regex"},
		"empty match":          {pattern("bad", "x*", ""), 400, "validation_failed", "custom_patterns[1].regex"},
		"NUL in regex":         {pattern("bad", "a\x00", ""), 400, "validation_failed", "custom_patterns[1].regex"},
		"NUL in name":          {pattern("b\x00d", "a", ""), 400, "validation_failed", "custom_patterns[1].name"},
		"NUL in placeholder":   {pattern("bad", "a", "[\x00]"), 400, "validation_failed", "custom_patterns[1].placeholder"},
		"duplicate name":       {pattern("ok", "y", ""), 400, "validation_failed", "custom_patterns[1].name"},
		"huge regex":           {pattern("bad", strings.Repeat("a", 1001), ""), 400, "validation_failed", "custom_patterns[1].regex"},
		"patterns wrong type":  {`{"payload_policy":"redact","custom_patterns":"x"}`, 400, "validation_failed", "custom_patterns"},
		"retention zero":       {map[string]any{"payload_policy": "store", "retention_days": 0}, 400, "validation_failed", "retention_days"},
		"retention negative":   {map[string]any{"payload_policy": "store", "retention_days": -3}, 400, "validation_failed", "retention_days"},
		"retention above plan": {map[string]any{"payload_policy": "store", "retention_days": 31}, 400, "validation_failed", "retention_days"},
		"retention huge":       {`{"payload_policy":"store","retention_days":1e30}`, 400, "validation_failed", "retention_days"},
		"retention fractional": {`{"payload_policy":"store","retention_days":1.5}`, 400, "validation_failed", "retention_days"},
		"oversized body":       {`{"payload_policy":"store","x":"` + strings.Repeat("a", 2<<20) + `"}`, 413, "body_too_large", ""},
	} {
		t.Run(name, func(t *testing.T) {
			p := testenv.ExpectProblem(t, env.Do(t, http.MethodPut, "/v1/privacy", tc.body, admin...), tc.status)
			if p.Code != tc.code || (tc.field != "" && !p.HasFieldError(tc.field)) {
				t.Fatalf("problem %+v, want %s naming %q", p, tc.code, tc.field)
			}
		})
	}
	for name, headers := range map[string][]string{
		"no credentials": nil, "member": testenv.Bearer(org.MemberToken), "secret key": testenv.APIKey(org.SecretKey),
	} {
		for _, method := range []string{http.MethodGet, http.MethodPut} {
			r := env.Do(t, method, "/v1/privacy", map[string]any{"payload_policy": "drop"}, headers...)
			if r.Status != http.StatusUnauthorized && r.Status != http.StatusForbidden {
				t.Errorf("%s %s: status %d, want 401 or 403", name, method, r.Status)
			}
		}
	}
	if got := getPrivacy(t, env, org); got.PayloadPolicy != "redact" || len(got.CustomPatterns) != 0 {
		t.Errorf("settings after the refusals: %+v", got)
	}
	// A server without EXPD_SECRETS_KEY cannot key hashes.
	bare := newSDKEnv(t, func(d *api.Deps) { d.Secrets = nil })
	if p := testenv.ExpectProblem(t, bare.Do(t, http.MethodPut, "/v1/privacy", map[string]any{"payload_policy": "hash"}, testenv.Bearer(bare.NewOrg(t).AdminToken)...), http.StatusConflict); p.Code != "secrets_not_configured" {
		t.Errorf("hash without a secrets key: %+v", p)
	}
	var n int64
	env.DB.Raw("SELECT COUNT(*) FROM audit_log WHERE org_id = ? AND action = 'privacy.updated'", org.ID).Scan(&n)
	if n != 1 {
		t.Errorf("%d audit entries, want the one accepted PUT", n)
	}
}

// An experiment's payload_policy may only make the org's stricter: a
// looser one is a 400 naming the field, on create and on update.
func TestExperimentPayloadPolicyOnlyStricter(t *testing.T) {
	env := newSDKEnv(t)
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	putPrivacy(t, env, org, map[string]any{"payload_policy": "redact"})
	cfg := validConfig("strict")
	cfg["payload_policy"] = "store"
	p := testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/experiments", cfg, admin...), http.StatusBadRequest)
	if !p.HasFieldError("payload_policy") || !strings.Contains(p.Detail, "looser") {
		t.Fatalf("looser policy: %+v", p)
	}
	cfg["payload_policy"] = "shred"
	if p := testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/experiments", cfg, admin...), http.StatusBadRequest); !p.HasFieldError("payload_policy") {
		t.Fatalf("unknown policy: %+v", p)
	}
	for _, ok := range []string{"redact", "drop"} {
		cfg["payload_policy"] = ok
		cfg["name"] = "strict-" + ok
		if e := create(t, env, org, cfg); e.ID == "" {
			t.Fatal("no experiment")
		}
	}
	patch := env.Do(t, http.MethodPatch, "/v1/experiments/strict-drop", `{"payload_policy":"store"}`, append(admin, "Content-Type", "application/merge-patch+json")...)
	if p := testenv.ExpectProblem(t, patch, http.StatusBadRequest); !p.HasFieldError("payload_policy") {
		t.Fatalf("looser patch: %+v", p)
	}
}

// An LLM judge where the payload policy keeps no text is refused with
// payload_not_kept: the org's policy, or a listed experiment's stricter
// one; under redact it is accepted, and so is a code evaluator.
func TestLLMJudgeRefusedWhereNoTextIsKept(t *testing.T) {
	env := newEvaluatorEnv(t, false)
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	putPrivacy(t, env, org, map[string]any{"payload_policy": "redact"})
	cfg := validConfig("private")
	cfg["payload_policy"] = "hash"
	create(t, env, org, cfg)
	spec := judgeSpec("judge")
	spec["experiments"] = []string{"private"}
	p := testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/evaluators", spec, admin...), http.StatusConflict)
	if p.Code != api.CodePayloadNotKept || !strings.Contains(p.Detail, "experiment private has payload policy hash") || !strings.Contains(p.Detail, "code evaluator") {
		t.Fatalf("judge over a hash experiment: %+v", p)
	}
	delete(spec, "experiments")
	ev := createEvaluator(t, env, org, spec) // redact keeps text to read
	putPrivacy(t, env, org, map[string]any{"payload_policy": "drop"})
	p = testenv.ExpectProblem(t, env.Do(t, http.MethodPut, "/v1/evaluators/"+ev.ID, spec, admin...), http.StatusConflict)
	if p.Code != api.CodePayloadNotKept || !strings.Contains(p.Detail, "the org's payload policy is drop") {
		t.Fatalf("judge update under drop: %+v", p)
	}
	createEvaluator(t, env, org, codeSpec("code"))
}

// The events read route and the call explorer say which policy their
// texts were stored under.
func TestReadsSayThePayloadPolicy(t *testing.T) {
	env := newSDKEnv(t, withSecrets(t))
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	exp := create(t, env, org, validConfig("exp"))
	var page struct {
		PayloadPolicy      string  `json:"payload_policy"`
		PayloadPolicySince *string `json:"payload_policy_since"`
	}
	env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID+"/calls", nil, admin...).ExpectJSON(t, http.StatusOK, &page)
	if page.PayloadPolicy != "store" || page.PayloadPolicySince != nil {
		t.Fatalf("calls before any change: %+v", page)
	}
	putPrivacy(t, env, org, map[string]any{"payload_policy": "redact"})
	strict := validConfig("strict")
	strict["payload_policy"] = "drop"
	sx := create(t, env, org, strict)
	for path, want := range map[string]string{
		"/v1/experiments/" + exp.ID + "/calls": "redact", "/v1/experiments/" + exp.ID + "/events": "redact",
		"/v1/experiments/" + sx.ID + "/calls": "drop", "/v1/experiments/" + sx.ID + "/events": "drop",
	} {
		env.Do(t, http.MethodGet, path, nil, admin...).ExpectJSON(t, http.StatusOK, &page)
		if page.PayloadPolicy != want || page.PayloadPolicySince == nil {
			t.Errorf("%s: %+v, want %s since the PUT", path, page, want)
		}
	}
}
