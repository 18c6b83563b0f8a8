package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/stats"
)

func TestSignedOutPagesSayHowToSignIn(t *testing.T) {
	env := testenv.New(t)
	for _, path := range []string{"/experiments", "/experiments/new", "/keys", "/billing", "/experiments/x/edit"} {
		p := newVisitor(t, env, "").get(path)
		expect(t, p, http.StatusUnauthorized, "Sign in to expd", "__session", "go run ./cmd/expd dev", `name="token"`)
	}
	p := newVisitor(t, env, "not-a-jwt").get("/experiments")
	expect(t, p, http.StatusUnauthorized, "was not accepted")
	// The root redirects to the list.
	p = newVisitor(t, env, "").get("/")
	if p.Status != http.StatusFound || p.Header.Get("Location") != "/experiments" {
		t.Fatalf("/ answered %d to %q", p.Status, p.Header.Get("Location"))
	}
}

func TestSignInWithAPastedTokenSetsTheSessionCookie(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	v := newVisitor(t, env, "")
	p := v.post("/sign-in", "/sign-in", url.Values{"token": {"garbage"}, "next": {"/keys"}})
	expect(t, p, http.StatusUnauthorized, "not accepted")
	p = v.post("/sign-in", "/sign-in", url.Values{"token": {org.AdminToken}, "next": {"//evil.example/"}})
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/experiments" {
		t.Fatalf("sign-in answered %d to %q", p.Status, p.Header.Get("Location"))
	}
	expect(t, v.get("/experiments"), http.StatusOK, "No experiments yet")
	// Signing out clears it.
	v.post("/experiments", "/sign-out", url.Values{})
	expect(t, v.get("/experiments"), http.StatusUnauthorized, "Sign in to expd")
}

func TestEveryPageCarriesTheSecurityHeaders(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	v := newVisitor(t, env, org.AdminToken)
	exp := resultstest.Experiment(t, env.DB, org.ID, resultstest.Config("headers"))
	for _, path := range []string{"/experiments", "/experiments/new", "/experiments/" + exp.ID, "/experiments/" + exp.ID + "/edit",
		"/experiments/" + exp.ID + "/history", "/experiments/" + exp.ID + "/calls", "/evaluators", "/layers", "/keys", "/billing", "/sign-in"} {
		p := v.get(path)
		csp := p.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self' 'nonce-") || !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") {
			t.Fatalf("%s: CSP %q", path, csp)
		}
		for h, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Cache-Control": "no-store", "Referrer-Policy": "same-origin"} {
			if got := p.Header.Get(h); got != want {
				t.Fatalf("%s: %s = %q, want %q", path, h, got, want)
			}
		}
		// The only script is the embedded one, with this response's nonce.
		nonce := strings.TrimSuffix(strings.SplitN(strings.SplitN(csp, "'nonce-", 2)[1], "'", 2)[0], "'")
		if !strings.Contains(p.Body, `<script src="/assets/dashboard.js" nonce="`+nonce+`"`) || strings.Count(p.Body, "<script") != 1 {
			t.Fatalf("%s: script tags do not match the nonce %q", path, nonce)
		}
	}
	for _, asset := range []string{"/assets/style.css", "/assets/dashboard.js"} {
		p := v.get(asset)
		if p.Status != http.StatusOK || p.Header.Get("X-Content-Type-Options") != "nosniff" || len(p.Body) < 100 {
			t.Fatalf("%s: %d", asset, p.Status)
		}
	}
	if p := v.get("/assets/../dashboard.go"); p.Status == http.StatusOK {
		t.Fatal("asset route served a file outside assets/")
	}
}

func TestFormsRefuseRequestsWithoutTheCSRFToken(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	v := newVisitor(t, env, org.AdminToken)
	v.get("/experiments") // gets the CSRF cookie
	form := url.Values{"name": {"csrf"}, "salt": {"salt-salt-1"}, "bucket_count": {"100"}, "v0-name": {"a"}, "v0-weight": {"100"}}
	expect(t, v.postRaw("/experiments/new", form, v.base), http.StatusForbidden, "Form expired")
	form.Set("csrf_token", "wrong-token-wrong-token")
	expect(t, v.postRaw("/experiments/new", form, v.base), http.StatusForbidden)
	// Right token, foreign origin.
	m := csrfInput.FindStringSubmatch(v.get("/experiments/new").Body)
	form.Set("csrf_token", m[1])
	expect(t, v.postRaw("/experiments/new", form, "https://evil.example"), http.StatusForbidden)
	expect(t, v.postRaw("/experiments/new", form, v.base), http.StatusSeeOther)
	list := v.get("/experiments")
	if strings.Count(list.Body, `href="/experiments/`) < 2 || !strings.Contains(list.Body, ">csrf</a>") {
		t.Fatalf("the one accepted post should have created exactly one experiment:\n%s", list.Body)
	}
}

func TestCreateShowsTheServersFieldErrorsNextToTheFields(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	v := newVisitor(t, env, org.MemberToken)
	form := url.Values{"name": {"bad name!"}, "salt": {"short"}, "bucket_count": {"1000"}, "status": {"running"},
		"v0-name": {"control"}, "v0-weight": {"50"}, "v1-name": {"treatment"}, "v1-weight": {"40"}, "v1-variables": {"{not json"},
		"m0-name": {"custom"}, "m0-kind": {"mean"}, "m0-category": {"primary"}, "m0-method": {"z_test"}, "m0-version": {"1"}, "m0-event_type": {"model_call"}, "m0-field": {"nope"}}
	p := v.post("/experiments/new", "/experiments/new", form)
	// The variables JSON is the form's own check; the rest come from the
	// experiments validation once the JSON is fixed.
	expect(t, p, http.StatusUnprocessableEntity, `id="v1-variables-err"><p class="field-error">must be a JSON object`)
	form.Set("v1-variables", `{"temperature": 0.2}`)
	p = v.post("/experiments/new", "/experiments/new", form)
	expect(t, p, http.StatusUnprocessableEntity,
		`id="name-err"><p class="field-error">must start with a letter or digit`,
		`id="salt-err"><p class="field-error">must be 8 to 64 characters`,
		"z_test applies to proportion metrics only",
		"must be one of latency_ms",
		`value="bad name!"`, // what was typed stays
		`{&#34;temperature&#34;: 0.2}`)
	if !strings.Contains(p.Body, `aria-describedby="name-hint name-err"`) {
		t.Fatal("the name input does not point at its error")
	}
	// Weights not adding up to 100 land on the allocation.
	if !strings.Contains(p.Body, "100") || !strings.Contains(p.Body, `class="banner error" role="alert"`) {
		t.Fatal("no error summary")
	}
	// Nothing was stored.
	expect(t, v.get("/experiments"), http.StatusOK, "No experiments yet")
}

func TestCreateEditPreviewSaveAndHistory(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	v := newVisitor(t, env, org.MemberToken)
	form := url.Values{"name": {"checkout-copy"}, "description": {"new checkout prompt"}, "salt": {"checkout-salt-1"}, "bucket_count": {"10000"}, "status": {"running"},
		"v0-name": {"control"}, "v0-weight": {"50"}, "v0-prompt": {"You are helpful."},
		"v1-name": {"treatment"}, "v1-weight": {"50"}, "v1-prompt": {"You are concise."},
		"b-latency_ms": {"on"}, "b-conversion": {"on"}}
	p := v.post("/experiments/new", "/experiments/new", form)
	if p.Status != http.StatusSeeOther {
		t.Fatalf("create: %d\n%s", p.Status, p.Body)
	}
	id := strings.TrimPrefix(p.Header.Get("Location"), "/experiments/")
	// The API serves what the form stored.
	resp := env.Do(t, http.MethodGet, "/v1/experiments/"+id, nil, testenv.Bearer(org.MemberToken)...)
	var got struct {
		Name, Salt string
		Variants   map[string]struct{ Prompt string }
		Metrics    []struct{ Name string }
	}
	resp.JSON(t, &got)
	if got.Name != "checkout-copy" || got.Salt != "checkout-salt-1" || got.Variants["treatment"].Prompt != "You are concise." || len(got.Metrics) != 2 {
		t.Fatalf("stored config: %+v", got)
	}
	expect(t, v.get("/experiments?status=running&name=CHECKOUT"), http.StatusOK, ">checkout-copy</a>", "control 50%, treatment 50%", "collecting")
	expect(t, v.get("/experiments?status=stopped"), http.StatusOK, "No experiment matches this filter")

	edit := v.get("/experiments/" + id + "/edit")
	expect(t, edit, http.StatusOK, `id="salt" name="salt" type="text" value="checkout-salt-1" readonly`, "Fixed after creation", `id="b-latency_ms" name="b-latency_ms" checked`)
	// Preview a weight change: 50/50 -> 60/40 moves exactly 1,000 of
	// 10,000 buckets from treatment to control, and saves nothing.
	form.Set("v0-weight", "60")
	form.Set("v1-weight", "40")
	form.Set("salt", "attempted-change")
	form.Set("action", "preview")
	p = v.post("/experiments/"+id+"/edit", "/experiments/"+id+"/edit", form)
	expect(t, p, http.StatusOK, "moves <strong>1000 of 10000 buckets (10%)</strong>", "1000 buckets go from treatment to control",
		`<span class="del">-       &#34;weight&#34;: 50`, `<span class="add">+       &#34;weight&#34;: 60`, "Save version 2")
	if v.get("/experiments/"+id+"/history").Body == "" || strings.Contains(v.get("/experiments/"+id+"/history").Body, "Version 2") {
		t.Fatal("preview stored a version")
	}
	form.Set("action", "save")
	p = v.post("/experiments/"+id+"/edit", "/experiments/"+id+"/edit", form)
	if p.Status != http.StatusSeeOther {
		t.Fatalf("save: %d\n%s", p.Status, p.Body)
	}
	hist := v.get("/experiments/" + id + "/history")
	expect(t, hist, http.StatusOK, "Version 2", "Version 1", `<span class="add">+       &#34;weight&#34;: 60`)
	resp = env.Do(t, http.MethodGet, "/v1/experiments/"+id, nil, testenv.Bearer(org.MemberToken)...)
	var v2 struct {
		Version    int
		Salt       string
		Allocation []struct{ Weight float64 }
	}
	resp.JSON(t, &v2)
	if v2.Version != 2 || v2.Salt != "checkout-salt-1" || v2.Allocation[0].Weight != 60 {
		t.Fatalf("after save: %+v", v2)
	}
	// A name taken by another experiment is shown on the name field.
	resultstest.Experiment(t, env.DB, org.ID, resultstest.Config("taken"))
	form.Set("name", "taken")
	p = v.post("/experiments/"+id+"/edit", "/experiments/"+id+"/edit", form)
	expect(t, p, http.StatusUnprocessableEntity, `id="name-err"><p class="field-error">already used`)
}

func TestAnotherOrgsExperimentIsNotFound(t *testing.T) {
	env := testenv.New(t)
	mine, theirs := env.NewOrg(t), env.NewOrg(t)
	exp := resultstest.Experiment(t, env.DB, theirs.ID, resultstest.Config("theirs"))
	v := newVisitor(t, env, mine.AdminToken)
	for _, path := range []string{"/experiments/" + exp.ID, "/experiments/" + exp.ID + "/edit", "/experiments/" + exp.ID + "/history", "/experiments/theirs"} {
		expect(t, v.get(path), http.StatusNotFound, "No such experiment")
	}
	expect(t, v.post("/experiments", "/experiments/"+exp.ID+"/runs", url.Values{}), http.StatusNotFound)
	expectNot(t, v.get("/experiments"), "theirs")
}

func TestResultsPageStates(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	v := newVisitor(t, env, org.MemberToken)
	exp := resultstest.Experiment(t, env.DB, org.ID, resultstest.Config("results-states"))
	path := "/experiments/" + exp.ID

	// Collecting: no run has rows yet.
	p := v.get(path)
	expect(t, p, http.StatusOK, "Collecting", `id="run-now"`, "Traffic")
	expectNot(t, p, `id="forest"`)

	// A run: every metric × arm in the table and one interval each.
	publishRun(t, env.DB, org.ID, exp.ID, "manual-2026-11-20T10:00:00Z", stats.GatePass, resultstest.Metrics, []string{"treatment"})
	p = v.get(path)
	// Good and bad by each metric's goal: latency down and revenue up are
	// both better; the verdict waits for conversion, the primary metric.
	expect(t, p, http.StatusOK, `data-intervals="1"`, "latency_ms · treatment", `<span class="badge good">better</span>`,
		`<span class="badge flat">inconclusive</span>`, "goal: decrease", "Sampled: each arm was analysed on at most 10,000 users",
		`Verdict: keep running`, "primary metric not decided yet: conversion (treatment)", "traffic control 50%, treatment 50%",
		"1,200 / 1,180", `option value="manual-2026-11-20T10:00:00Z" selected`)
	expectNot(t, p, "Sample ratio mismatch", "Collecting")
	// What the results pipeline adds per row: inference mode, CUPED,
	// crossover health, warnings, non-inferiority.
	expect(t, p, http.StatusOK, "sequential (always valid)", "fixed_horizon: -0.3 to 0.3, p 0.200", "CUPED, variance −23%, θ 0.8",
		"non-inferiority (margin 0.05 relative): non_inferior", "crossover: control 30, treatment 25", "ties are heavy")
	expectNot(t, p, "badge bad", "badge up", "badge down")
	if n := strings.Count(p.Body, `<line class="ci `); n != 3 || strings.Count(p.Body, `<div class="multiple">`) != 3 {
		t.Fatalf("%d intervals drawn, want 3", n)
	}

	// A second run with a failed SRM gate is the newest; the selector
	// still reaches the first.
	publishRun(t, env.DB, org.ID, exp.ID, "manual-2026-11-21T10:00:00Z", stats.GateFail, resultstest.Metrics, []string{"treatment"})
	p = v.get(path)
	expect(t, p, http.StatusOK, "Sample ratio mismatch", "Preliminary:", `option value="manual-2026-11-21T10:00:00Z" selected`)
	p = v.get(path + "?run=manual-2026-11-20T10:00:00Z")
	expectNot(t, p, "Sample ratio mismatch")

	// The distribution on demand.
	p = v.get(path + "?run=manual-2026-11-20T10:00:00Z&dm=conversion&dv=treatment")
	expect(t, p, http.StatusOK, `id="distribution"`, "Distribution of conversion", "<td class=\"num\">1180</td>", `<rect class="bar s1"`)
}

func TestNotAdminsSeeNoKeysAndNoBillingButtons(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	member := newVisitor(t, env, org.MemberToken)
	expect(t, member.get("/keys"), http.StatusForbidden, "Admins only", auth.AdminRole)
	expect(t, member.post("/experiments", "/keys", url.Values{"scope": {"secret"}, "confirm": {"yes"}}), http.StatusForbidden, "Admins only")
	expect(t, member.post("/experiments", "/billing/checkout", url.Values{"plan": {"pro"}}), http.StatusForbidden)
	p := member.get("/billing")
	expect(t, p, http.StatusOK, "Only your organization's admins can change the plan")
	expectNot(t, p, "Buy pro", `href="/keys"`)
}

func TestBillingUnconfiguredIsExplainedAndDisabled(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	admin := newVisitor(t, env, org.AdminToken)
	p := admin.get("/billing")
	expect(t, p, http.StatusOK, "Billing is not configured on this server", `<button type="submit" disabled>Buy pro</button>`,
		`<button type="submit" disabled>Buy business</button>`, "free (yours)", "100,000")
	p = admin.post("/billing", "/billing/checkout", url.Values{"plan": {"pro"}})
	expect(t, p, http.StatusConflict, "Billing is not configured on this server.")
	p = admin.post("/billing", "/billing/portal", url.Values{})
	expect(t, p, http.StatusConflict)
}

func TestKeysPageConfirmsBeforeRotating(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	admin := newVisitor(t, env, org.AdminToken)
	p := admin.get("/keys")
	expect(t, p, http.StatusOK, org.PublishableKey, "Rotate secret key")
	expectNot(t, p, org.SecretKey)
	p = admin.post("/keys", "/keys", url.Values{"scope": {"secret"}})
	expect(t, p, http.StatusOK, "Rotate the secret key?", `name="confirm" value="yes"`)
	// Nothing rotated yet: the old secret key still works.
	if r := env.Do(t, http.MethodGet, "/v1/config", nil, testenv.APIKey(org.SecretKey)...); r.Status != http.StatusOK {
		t.Fatalf("secret key stopped working before confirmation: %d", r.Status)
	}
	// Without Temporal the rotation cannot run: said so, nothing changed.
	p = admin.post("/keys", "/keys", url.Values{"scope": {"secret"}, "confirm": {"yes"}})
	expect(t, p, http.StatusServiceUnavailable, "The rotation did not complete")
	expect(t, admin.post("/keys", "/keys", url.Values{"scope": {"root"}}), http.StatusBadRequest, "Unknown key scope")
}
