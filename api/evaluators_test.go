package api_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/expd/expd/api"
	"github.com/expd/expd/internal/testenv"
)

// judgeKey is the plaintext the secrecy checks look for.
const judgeKey = "sk-judge-PLAINTEXT-4f1c9a"

type evaluatorView struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Score        string   `json:"score"`
	Kind         string   `json:"kind"`
	Experiments  []string `json:"experiments"`
	SamplingRate float64  `json:"sampling_rate"`
	Concurrency  int      `json:"concurrency"`
	Version      int      `json:"version"`
	Endpoint     *struct {
		BaseURL string `json:"base_url"`
		Model   string `json:"model"`
	} `json:"endpoint"`
}

func newEvaluatorEnv(t *testing.T, dev bool, tune ...func(*api.Deps)) *testenv.Env {
	ring := testenv.NewKeyring(t)
	return newSDKEnv(t, append([]func(*api.Deps){func(d *api.Deps) {
		d.Resolver = publicDNS{}
		d.Secrets = ring
		if dev {
			d.DevToken = "dev-token"
		}
	}}, tune...)...)
}

func judgeSpec(name string) map[string]any {
	return map[string]any{
		"name": name, "score": "helpfulness", "kind": "llm_judge", "sampling_rate": 0.25,
		"daily_budget": map[string]any{"max_evaluations": 1000, "max_cost_usd": 5},
		"endpoint":     map[string]any{"base_url": "https://hooks.example.com/v1", "model": "gpt-4o-mini", "api_key": judgeKey},
		"template":     "Rate the answer from 1 to 5.\nQuestion: {{input}}\nAnswer: {{output}}",
		"range":        []float64{1, 5},
	}
}

func codeSpec(name string) map[string]any {
	return map[string]any{
		"name": name, "score": "valid_json", "kind": "code", "sampling_rate": 1,
		"daily_budget": map[string]any{"max_evaluations": 10000},
		"check":        map[string]any{"type": "json_valid"},
	}
}

func createEvaluator(t *testing.T, env *testenv.Env, org testenv.Org, body any) evaluatorView {
	t.Helper()
	r := env.Do(t, "POST", "/v1/evaluators", body, testenv.Bearer(org.AdminToken)...)
	if r.Status != http.StatusCreated {
		t.Fatalf("create evaluator: %d %s", r.Status, r.Body)
	}
	var ev evaluatorView
	r.JSON(t, &ev)
	return ev
}

func TestEvaluatorLifecycle(t *testing.T) {
	env := newEvaluatorEnv(t, false)
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	if r := env.Do(t, "POST", "/v1/experiments", testenv.ExperimentConfig("support-bot"), admin...); r.Status != http.StatusCreated {
		t.Fatalf("create experiment: %d %s", r.Status, r.Body)
	}
	spec := judgeSpec("helpfulness judge")
	spec["experiments"] = []string{"support-bot"}
	judge := createEvaluator(t, env, org, spec)
	if judge.Version != 1 || judge.Kind != "llm_judge" || judge.Concurrency != 4 || len(judge.Experiments) != 1 ||
		judge.Experiments[0] == "support-bot" || judge.Endpoint == nil || judge.Endpoint.Model != "gpt-4o-mini" {
		t.Fatalf("created %+v (want version 1, the default concurrency, the experiment by id)", judge)
	}
	code := createEvaluator(t, env, org, codeSpec("json check"))

	var list struct {
		Evaluators []evaluatorView `json:"evaluators"`
	}
	env.Do(t, "GET", "/v1/evaluators", nil, admin...).JSON(t, &list)
	if len(list.Evaluators) != 2 || list.Evaluators[0].ID != judge.ID || list.Evaluators[1].ID != code.ID {
		t.Fatalf("list %+v", list)
	}

	// Every edit raises the version; an edit without api_key keeps the key.
	spec["sampling_rate"] = 0.5
	delete(spec["endpoint"].(map[string]any), "api_key")
	for want := 2; want <= 3; want++ {
		r := env.Do(t, "PUT", "/v1/evaluators/"+judge.ID, spec, admin...)
		var got evaluatorView
		r.JSON(t, &got)
		if r.Status != http.StatusOK || got.Version != want || got.SamplingRate != 0.5 {
			t.Fatalf("update %d: %d %s", want, r.Status, r.Body)
		}
	}
	var sealed string
	env.DB.Raw("SELECT api_key FROM evaluators WHERE id = ?", judge.ID).Scan(&sealed)
	if !strings.HasPrefix(sealed, "v1.") {
		t.Fatalf("the kept key is not sealed: %q", sealed)
	}
	if got := openSealed(t, env, sealed, judge.ID); got != judgeKey {
		t.Fatalf("the key kept across edits opens to %q", got)
	}

	// Another org sees none of it.
	other := env.NewOrg(t)
	for _, m := range []string{"GET", "DELETE"} {
		p := testenv.ExpectProblem(t, env.Do(t, m, "/v1/evaluators/"+judge.ID, nil, testenv.Bearer(other.AdminToken)...), http.StatusNotFound)
		if p.Code != api.CodeEvaluatorNotFound {
			t.Fatalf("%s another org's evaluator: %+v", m, p)
		}
	}
	testenv.ExpectProblem(t, env.Do(t, "PUT", "/v1/evaluators/"+judge.ID, spec, testenv.Bearer(other.AdminToken)...), http.StatusNotFound)

	if r := env.Do(t, "DELETE", "/v1/evaluators/"+code.ID, nil, admin...); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	testenv.ExpectProblem(t, env.Do(t, "GET", "/v1/evaluators/"+code.ID, nil, admin...), http.StatusNotFound)
	testenv.ExpectProblem(t, env.Do(t, "DELETE", "/v1/evaluators/"+code.ID, nil, admin...), http.StatusNotFound)
	// A deleted evaluator's score name is free again.
	createEvaluator(t, env, org, codeSpec("json check again"))

	expectActions(t, env, org, map[string]int{"evaluator.created": 3, "evaluator.updated": 2, "evaluator.deleted": 1})
}

func openSealed(t *testing.T, env *testenv.Env, sealed, owner string) string {
	t.Helper()
	plain, err := env.Deps.Secrets.Open(sealed, owner)
	if err != nil {
		t.Fatal(err)
	}
	return plain
}

// The judge's key is in no answer, no log line, no audit entry, and not
// in clear in its row.
func TestEvaluatorKeyNeverLeaves(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	prevDefault := slog.Default()
	slog.SetDefault(logger)
	t.Cleanup(func() { slog.SetDefault(prevDefault) })
	env := newEvaluatorEnv(t, false, func(d *api.Deps) {
		d.Logger = logger
		d.Logging = api.RequestLogging{SampleHot: 1}
	})
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)

	var answers [][]byte
	do := func(method, path string, body any) testenv.Response {
		r := env.Do(t, method, path, body, admin...)
		answers = append(answers, r.Body)
		return r
	}
	created := do("POST", "/v1/evaluators", judgeSpec("judge"))
	var ev evaluatorView
	created.JSON(t, &ev)
	if created.Status != http.StatusCreated || created.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create: %d %s", created.Status, created.Body)
	}
	spec := judgeSpec("judge, renamed")
	do("PUT", "/v1/evaluators/"+ev.ID, spec)
	bad := judgeSpec("bad")
	bad["template"] = "no output here"
	testenv.ExpectProblem(t, do("POST", "/v1/evaluators", bad), http.StatusBadRequest)
	do("GET", "/v1/evaluators", nil)
	do("GET", "/v1/evaluators/"+ev.ID, nil)
	do("GET", "/v1/audit", nil)

	for i, a := range answers {
		if bytes.Contains(a, []byte(judgeKey)) || bytes.Contains(a, []byte(`"api_key"`)) {
			t.Fatalf("answer %d carries the key: %s", i, a)
		}
	}
	if bytes.Contains(logs.Bytes(), []byte(judgeKey)) {
		t.Fatal("the key is in the logs")
	}
	if !bytes.Contains(logs.Bytes(), []byte("/v1/evaluators")) {
		t.Fatal("no request was logged; the log check proves nothing")
	}
	// Every text column of the evaluator's row and of the audit log.
	var rows []map[string]any
	env.DB.Raw("SELECT * FROM evaluators WHERE org_id = ?", org.ID).Scan(&rows)
	env.DB.Raw("SELECT * FROM audit_log WHERE org_id = ?", org.ID).Scan(&rows)
	if len(rows) < 3 {
		t.Fatalf("read %d rows; the scan proves nothing", len(rows))
	}
	for _, r := range rows {
		for col, v := range r {
			s := ""
			switch x := v.(type) {
			case string:
				s = x
			case []byte:
				s = string(x)
			}
			if strings.Contains(s, judgeKey) {
				t.Fatalf("column %s holds the key in clear", col)
			}
		}
	}
}

func TestEvaluatorWithoutSecretsKeyIsRefused(t *testing.T) {
	env := newEvaluatorEnv(t, false, func(d *api.Deps) { d.Secrets = nil })
	org := env.NewOrg(t)
	p := testenv.ExpectProblem(t, env.Do(t, "POST", "/v1/evaluators", judgeSpec("judge"), testenv.Bearer(org.AdminToken)...), http.StatusConflict)
	if p.Code != api.CodeSecretsNotConfigured || strings.Contains(p.Detail, judgeKey) {
		t.Fatalf("%+v", p)
	}
	// A code evaluator keeps no secret and needs no key.
	createEvaluator(t, env, org, codeSpec("json"))
	var n int64
	env.DB.Table("evaluators").Where("org_id = ?", org.ID).Count(&n)
	if n != 1 {
		t.Fatalf("%d evaluators stored, want only the code one", n)
	}
}

func TestEvaluatorDevModeAllowsLocalJudges(t *testing.T) {
	local := judgeSpec("local judge")
	local["endpoint"].(map[string]any)["base_url"] = "http://127.0.0.1:11434/v1"
	dev := newEvaluatorEnv(t, true)
	createEvaluator(t, dev, dev.NewOrg(t), local)
	prod := newEvaluatorEnv(t, false)
	p := testenv.ExpectProblem(t, prod.Do(t, "POST", "/v1/evaluators", local, testenv.Bearer(prod.NewOrg(t).AdminToken)...), http.StatusBadRequest)
	if !p.HasFieldError("endpoint.base_url") {
		t.Fatalf("loopback judge outside dev: %+v", p)
	}
}

func TestEvaluatorBadInput(t *testing.T) {
	env := newEvaluatorEnv(t, false)
	org := env.NewOrg(t)
	other := env.NewOrg(t)
	theirs := createEvaluator(t, env, other, codeSpec("theirs"))
	mine := createEvaluator(t, env, org, codeSpec("mine"))
	admin := testenv.Bearer(org.AdminToken)
	post := func(body any, headers []string) testenv.Response {
		return env.Do(t, "POST", "/v1/evaluators", body, headers...)
	}
	judge := func(edit func(map[string]any)) map[string]any {
		s := judgeSpec("j")
		s["score"] = "graded"
		edit(s)
		return s
	}
	code := func(check map[string]any) map[string]any {
		s := codeSpec("c")
		s["score"] = "checked"
		s["check"] = check
		return s
	}
	endpoint := func(url string) map[string]any {
		return judge(func(s map[string]any) { s["endpoint"].(map[string]any)["base_url"] = url })
	}
	cases := []struct {
		name   string
		r      testenv.Response
		status int
		field  string
		code   string
	}{
		{"malformed JSON", post(`{"name": `, admin), 400, "", api.CodeMalformedJSON},
		{"empty body", post(``, admin), 400, "", api.CodeMalformedJSON},
		{"trailing data", post(`{} {}`, admin), 400, "", api.CodeMalformedJSON},
		{"sampling_rate of the wrong type", post(`{"sampling_rate": "half"}`, admin), 400, "sampling_rate", api.CodeValidationFailed},
		{"empty object", post(`{}`, admin), 400, "kind", api.CodeValidationFailed},
		{"template without output", post(judge(func(s map[string]any) { s["template"] = "Rate {{input}} from 1 to 5" }), admin), 400, "template", api.CodeValidationFailed},
		{"template with unknown placeholder", post(judge(func(s map[string]any) { s["template"] = "{{output}} {{secret}}" }), admin), 400, "template", api.CodeValidationFailed},
		{"no template", post(judge(func(s map[string]any) { delete(s, "template") }), admin), 400, "template", api.CodeValidationFailed},
		{"range reversed", post(judge(func(s map[string]any) { s["range"] = []float64{5, 1} }), admin), 400, "range", api.CodeValidationFailed},
		{"range empty", post(judge(func(s map[string]any) { s["range"] = []float64{3, 3} }), admin), 400, "range", api.CodeValidationFailed},
		{"range of one", post(judge(func(s map[string]any) { s["range"] = []float64{1} }), admin), 400, "range", api.CodeValidationFailed},
		{"sampling_rate 0", post(judge(func(s map[string]any) { s["sampling_rate"] = 0 }), admin), 400, "sampling_rate", api.CodeValidationFailed},
		{"sampling_rate above 1", post(judge(func(s map[string]any) { s["sampling_rate"] = 1.5 }), admin), 400, "sampling_rate", api.CodeValidationFailed},
		{"sampling_rate negative", post(judge(func(s map[string]any) { s["sampling_rate"] = -0.1 }), admin), 400, "sampling_rate", api.CodeValidationFailed},
		{"no sampling_rate", post(judge(func(s map[string]any) { delete(s, "sampling_rate") }), admin), 400, "sampling_rate", api.CodeValidationFailed},
		{"no budget", post(judge(func(s map[string]any) { delete(s, "daily_budget") }), admin), 400, "daily_budget", api.CodeValidationFailed},
		{"budget of 0", post(judge(func(s map[string]any) { s["daily_budget"] = map[string]any{"max_evaluations": 0} }), admin), 400, "daily_budget.max_evaluations", api.CodeValidationFailed},
		{"negative cost budget", post(judge(func(s map[string]any) { s["daily_budget"] = map[string]any{"max_evaluations": 5, "max_cost_usd": -1} }), admin), 400, "daily_budget.max_cost_usd", api.CodeValidationFailed},
		{"concurrency too high", post(judge(func(s map[string]any) { s["concurrency"] = 1000 }), admin), 400, "concurrency", api.CodeValidationFailed},
		{"unknown kind", post(judge(func(s map[string]any) { s["kind"] = "vibes" }), admin), 400, "kind", api.CodeValidationFailed},
		{"bad score name", post(judge(func(s map[string]any) { s["score"] = "has spaces" }), admin), 400, "score", api.CodeValidationFailed},
		{"no endpoint", post(judge(func(s map[string]any) { delete(s, "endpoint") }), admin), 400, "endpoint", api.CodeValidationFailed},
		{"no api_key", post(judge(func(s map[string]any) { delete(s["endpoint"].(map[string]any), "api_key") }), admin), 400, "endpoint.api_key", api.CodeValidationFailed},
		{"no model", post(judge(func(s map[string]any) { delete(s["endpoint"].(map[string]any), "model") }), admin), 400, "endpoint.model", api.CodeValidationFailed},
		{"endpoint on loopback", post(endpoint("https://127.0.0.1/v1"), admin), 400, "endpoint.base_url", api.CodeValidationFailed},
		{"endpoint on a private address", post(endpoint("https://10.1.2.3/v1"), admin), 400, "endpoint.base_url", api.CodeValidationFailed},
		{"endpoint on metadata service", post(endpoint("https://169.254.169.254/v1"), admin), 400, "endpoint.base_url", api.CodeValidationFailed},
		{"endpoint resolving privately", post(endpoint("https://rebind.example.com/v1"), admin), 400, "endpoint.base_url", api.CodeValidationFailed},
		{"endpoint over http", post(endpoint("http://hooks.example.com/v1"), admin), 400, "endpoint.base_url", api.CodeValidationFailed},
		{"endpoint localhost", post(endpoint("https://localhost/v1"), admin), 400, "endpoint.base_url", api.CodeValidationFailed},
		{"check on a judge", post(judge(func(s map[string]any) { s["check"] = map[string]any{"type": "json_valid"} }), admin), 400, "check", api.CodeValidationFailed},
		{"unknown check type", post(code(map[string]any{"type": "sentiment"}), admin), 400, "check.type", api.CodeValidationFailed},
		{"no check", post(code(nil), admin), 400, "check", api.CodeValidationFailed},
		{"bad regex", post(code(map[string]any{"type": "regex", "pattern": "(open"}), admin), 400, "check.pattern", api.CodeValidationFailed},
		{"bad schema", post(code(map[string]any{"type": "json_schema", "schema": map[string]any{"type": "strnig"}}), admin), 400, "check.schema", api.CodeValidationFailed},
		{"cost budget on code", post(func() map[string]any {
			s := code(map[string]any{"type": "json_valid"})
			s["daily_budget"] = map[string]any{"max_evaluations": 5, "max_cost_usd": 1}
			return s
		}(), admin), 400, "daily_budget.max_cost_usd", api.CodeValidationFailed},
		{"template on code", post(func() map[string]any {
			s := code(map[string]any{"type": "json_valid"})
			s["template"] = "{{output}}"
			return s
		}(), admin), 400, "template", api.CodeValidationFailed},
		{"unknown experiment", post(judge(func(s map[string]any) { s["experiments"] = []string{"nope"} }), admin), 400, "experiments[0]", api.CodeValidationFailed},
		{"another org's experiment", post(judge(func(s map[string]any) { s["experiments"] = []string{theirs.ID} }), admin), 400, "experiments[0]", api.CodeValidationFailed},
		{"NUL in name", post(judge(func(s map[string]any) { s["name"] = "a\x00b" }), admin), 400, "name", api.CodeValidationFailed},
		{"oversized body", post(`{"template":"`+strings.Repeat("x", 130<<10)+`"}`, admin), 413, "", api.CodeBodyTooLarge},
		{"no credentials", post(codeSpec("x"), nil), 401, "", api.CodeUnauthorized},
		{"API key instead of a session", post(codeSpec("x"), []string{"X-API-Key", org.SecretKey}), 401, "", api.CodeUnauthorized},
		{"member", post(codeSpec("x"), testenv.Bearer(org.MemberToken)), 403, "", api.CodeAdminRequired},
		{"member lists", env.Do(t, "GET", "/v1/evaluators", nil, testenv.Bearer(org.MemberToken)...), 403, "", api.CodeAdminRequired},
		{"member edits", env.Do(t, "PUT", "/v1/evaluators/"+mine.ID, codeSpec("x"), testenv.Bearer(org.MemberToken)...), 403, "", api.CodeAdminRequired},
		{"another org's evaluator", env.Do(t, "GET", "/v1/evaluators/"+theirs.ID, nil, admin...), 404, "", api.CodeEvaluatorNotFound},
		{"edit another org's evaluator", env.Do(t, "PUT", "/v1/evaluators/"+theirs.ID, codeSpec("x"), admin...), 404, "", api.CodeEvaluatorNotFound},
		{"delete another org's evaluator", env.Do(t, "DELETE", "/v1/evaluators/"+theirs.ID, nil, admin...), 404, "", api.CodeEvaluatorNotFound},
		{"malformed id", env.Do(t, "GET", "/v1/evaluators/not-an-id", nil, admin...), 404, "", api.CodeEvaluatorNotFound},
		{"bad edit", env.Do(t, "PUT", "/v1/evaluators/"+mine.ID, code(map[string]any{"type": "max_length", "max_length": 0}), admin...), 400, "check.max_length", api.CodeValidationFailed},
		{"PATCH", env.Do(t, "PATCH", "/v1/evaluators/"+mine.ID, map[string]any{}, admin...), 405, "", api.CodeMethodNotAllowed},
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
	// Two live code evaluators writing one score name would replace each
	// other's scores: the second is refused naming score.
	s := codeSpec("second")
	p := testenv.ExpectProblem(t, post(s, admin), http.StatusBadRequest)
	if !p.HasFieldError("score") {
		t.Fatalf("score taken: %+v", p)
	}
	// Nothing of the refused requests was stored, and the bad edit left version 1.
	var n int64
	env.DB.Table("evaluators").Where("org_id = ?", org.ID).Count(&n)
	var got evaluatorView
	env.Do(t, "GET", "/v1/evaluators/"+mine.ID, nil, admin...).JSON(t, &got)
	if n != 1 || got.Version != 1 {
		t.Fatalf("%d evaluators stored, version %d; want 1 and 1", n, got.Version)
	}
}
