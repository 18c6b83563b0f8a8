package api_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/expd/expd/internal/testenv"
)

func lifecycle(t *testing.T, env *testenv.Env, org testenv.Org, id, action string, body any) experimentBody {
	t.Helper()
	var e experimentBody
	env.Do(t, "POST", "/v1/experiments/"+id+"/"+action, body, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusOK, &e)
	return e
}

func TestLifecycleRoutesChangeWhatIsServed(t *testing.T) {
	env := newSDKEnv(t)
	org := env.NewOrg(t)
	exp := create(t, env, org, validConfig("lifecycle"))

	stopped := lifecycle(t, env, org, exp.ID, "stop", nil)
	if stopped.Status != "stopped" || stopped.Version != 2 {
		t.Fatalf("stop: %+v", stopped)
	}
	// Idempotent: a second stop mints nothing.
	if again := lifecycle(t, env, org, exp.ID, "stop", nil); again.Version != 2 {
		t.Fatalf("second stop minted version %d", again.Version)
	}
	waitFor(t, func() bool { return assignUser(t, env, org.PublishableKey, exp.ID, "u1").Stopped })
	for _, u := range []string{"u1", "u2", "u3", "u4"} {
		if a := assignUser(t, env, org.PublishableKey, exp.ID, u); a.Variant != "control" || a.Status != "stopped" || a.Reason == "" || a.InExperiment || a.ReasonCode != "not_running" {
			t.Fatalf("stopped experiment assigned %+v", a)
		}
	}

	if started := lifecycle(t, env, org, exp.ID, "start", nil); started.Status != "running" || started.Version != 3 {
		t.Fatalf("start: %+v", started)
	}
	shipped := lifecycle(t, env, org, exp.ID, "ship", map[string]string{"variant": "concise"})
	if shipped.Status != "shipped" || shipped.Version != 4 {
		t.Fatalf("ship: %+v", shipped)
	}
	waitFor(t, func() bool { return assignUser(t, env, org.PublishableKey, exp.ID, "u1").Status == "shipped" })
	for _, u := range []string{"u1", "u2", "u3", "u4"} {
		if a := assignUser(t, env, org.PublishableKey, exp.ID, u); a.Variant != "concise" || a.Stopped || a.InExperiment || a.ReasonCode != "shipped" {
			t.Fatalf("shipped experiment assigned %+v", a)
		}
	}
	cfg := decodeConfig(t, getConfig(t, env, org.PublishableKey))
	if e := cfg.Experiments[0]; e.Status != "shipped" || len(e.BucketMap) != 1 || e.BucketMap[0].Variant != "concise" {
		t.Fatalf("config serves %+v", e)
	}
	// Shipping the same variant again is a no-op.
	if again := lifecycle(t, env, org, exp.ID, "ship", map[string]string{"variant": "concise"}); again.Version != 4 {
		t.Fatalf("second ship minted version %d", again.Version)
	}

	// Every change is in the audit log with the admin as actor.
	log := listAudit(t, env, org, url.Values{"experiment_id": {exp.ID}})
	want := []string{"experiment.shipped", "experiment.started", "experiment.stopped", "experiment.created"}
	if len(log.Entries) != len(want) {
		t.Fatalf("audit entries %+v", log.Entries)
	}
	for i, a := range want {
		if e := log.Entries[i]; e.Action != a || e.Actor != "user_admin_"+org.ClerkOrgID || e.After["status"] == e.Before["status"] && i < 3 {
			t.Fatalf("entry %d: %+v, want %s", i, e, a)
		}
	}
}

func TestLifecycleRefusals(t *testing.T) {
	env := newSDKEnv(t)
	org := env.NewOrg(t)
	other := env.NewOrg(t)
	exp := create(t, env, org, validConfig("refusals"))
	theirs := create(t, env, other, validConfig("theirs"))
	admin := testenv.Bearer(org.AdminToken)
	path := "/v1/experiments/" + exp.ID

	cases := []struct {
		name, path string
		body       any
		headers    []string
		status     int
		field      string
	}{
		{"ship unknown variant", path + "/ship", map[string]string{"variant": "ghost"}, admin, 400, "variant"},
		{"ship without variant", path + "/ship", map[string]string{}, admin, 400, "variant"},
		{"ship variant as number", path + "/ship", `{"variant": 7}`, admin, 400, "variant"},
		{"ship NUL variant", path + "/ship", map[string]string{"variant": "con\x00trol"}, admin, 400, "variant"},
		{"ship malformed JSON", path + "/ship", `{"variant":`, admin, 400, ""},
		{"ship oversized body", path + "/ship", `{"variant":"` + string(make([]byte, 2<<20)) + `"}`, admin, 413, ""},
		{"member", path + "/stop", nil, testenv.Bearer(org.MemberToken), 403, ""},
		{"no credentials", path + "/stop", nil, nil, 401, ""},
		{"another org's experiment", "/v1/experiments/" + theirs.ID + "/stop", nil, admin, 404, ""},
		{"unknown experiment", "/v1/experiments/00000000-0000-0000-0000-000000000000/start", nil, admin, 404, ""},
	}
	for _, c := range cases {
		p := testenv.ExpectProblem(t, env.Do(t, "POST", c.path, c.body, c.headers...), c.status)
		if c.field != "" && !p.HasFieldError(c.field) {
			t.Errorf("%s: want error on %q, got %+v", c.name, c.field, p.Errors)
		}
	}
	// Nothing was written by the refusals.
	if got := listAudit(t, env, org, url.Values{"experiment_id": {exp.ID}}); len(got.Entries) != 1 {
		t.Fatalf("refusals wrote audit entries: %+v", got.Entries)
	}

	lifecycle(t, env, org, exp.ID, "ship", map[string]string{"variant": "control"})
	final := []struct {
		action string
		body   any
		field  string
	}{
		{"start", nil, "status"},
		{"stop", nil, "status"},
		{"ship", map[string]string{"variant": "concise"}, "variant"},
	}
	for _, f := range final {
		p := testenv.ExpectProblem(t, env.Do(t, "POST", path+"/"+f.action, f.body, admin...), 409)
		if p.Code != "invalid_transition" || !p.HasFieldError(f.field) {
			t.Errorf("%s of a shipped experiment: %+v", f.action, p)
		}
	}
	// A PUT cannot revive it either.
	cfg := validConfig("refusals")
	cfg["status"] = "running"
	p := testenv.ExpectProblem(t, env.Do(t, "PUT", path, cfg, admin...), 409)
	if !p.HasFieldError("status") {
		t.Fatalf("PUT running on shipped: %+v", p)
	}
}

func TestDraftAndScheduledServeControl(t *testing.T) {
	env := newSDKEnv(t)
	org := env.NewOrg(t)
	draft := validConfig("drafted")
	draft["status"] = "draft"
	d := create(t, env, org, draft)
	sched := validConfig("scheduled")
	sched["start_at"] = "2099-01-01T00:00:00Z"
	s := create(t, env, org, sched)
	if d.Status != "draft" || s.Status != "scheduled" {
		t.Fatalf("statuses %q %q", d.Status, s.Status)
	}
	for _, id := range []string{d.ID, s.ID} {
		if a := assignUser(t, env, org.PublishableKey, id, "u1"); a.Variant != "control" || !a.Stopped || a.Reason == "" {
			t.Fatalf("%s assigned %+v", id, a)
		}
	}
}
