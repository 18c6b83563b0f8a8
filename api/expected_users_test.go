package api_test

import (
	"net/http"
	"testing"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/power"
)

type tunedBody struct {
	ID               string   `json:"id"`
	Status           string   `json:"status"`
	Version          int      `json:"version"`
	ExpectedUsers    *float64 `json:"expected_users"`
	SequentialTuning *float64 `json:"sequential_tuning"`
}

// expected_users is N* when sequential_tuning is not given; both are
// fixed once the experiment has started: a change by PUT or PATCH is a
// 400 naming the field, leaving them out keeps them, nothing is written.
// Before the start (a draft) they may change.
func TestExpectedUsersIsNStarAndFixedAtStart(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	cfg := validConfig("tuned")
	cfg["expected_users"] = 1200
	var e tunedBody
	env.Do(t, "POST", "/v1/experiments", cfg, admin...).ExpectJSON(t, http.StatusCreated, &e)
	if e.Status != "running" || e.ExpectedUsers == nil || *e.ExpectedUsers != 1200 {
		t.Fatalf("created %+v", e)
	}
	var p power.Answer
	env.Do(t, "GET", "/v1/experiments/tuned/power", nil, admin...).ExpectJSON(t, http.StatusOK, &p)
	if p.NStar != 1200 || p.NStarSource != "expected_users" {
		t.Fatalf("power answer's N* %v from %q, want 1200 from expected_users", p.NStar, p.NStarSource)
	}

	for field, value := range map[string]any{"expected_users": 5000, "sequential_tuning": 800} {
		put := validConfig("tuned")
		put[field] = value
		put["expected_users"] = map[bool]any{true: 5000, false: 1200}[field == "expected_users"]
		if pr := testenv.ExpectProblem(t, env.Do(t, "PUT", "/v1/experiments/tuned", put, admin...), 400); !pr.HasFieldError(field) {
			t.Errorf("PUT changing %s: %+v", field, pr)
		}
		if pr := testenv.ExpectProblem(t, patch(t, env, org, e.ID, `{"`+field+`": 3000}`), 400); !pr.HasFieldError(field) {
			t.Errorf("PATCH changing %s: %+v", field, pr)
		}
	}
	var got tunedBody
	env.Do(t, "GET", "/v1/experiments/tuned", nil, admin...).ExpectJSON(t, http.StatusOK, &got)
	if got.Version != 1 || *got.ExpectedUsers != 1200 || got.SequentialTuning != nil {
		t.Fatalf("refused updates wrote something: %+v", got)
	}
	// Leaving them out (PUT) or nulling them (PATCH) keeps them; the same
	// value is no change.
	put := validConfig("tuned")
	put["description"] = "kept"
	env.Do(t, "PUT", "/v1/experiments/tuned", put, admin...).ExpectJSON(t, http.StatusOK, &got)
	if got.Version != 2 || got.ExpectedUsers == nil || *got.ExpectedUsers != 1200 {
		t.Fatalf("PUT without expected_users: %+v", got)
	}
	patch(t, env, org, e.ID, `{"expected_users": null, "description": "again"}`).ExpectJSON(t, http.StatusOK, &got)
	if got.Version != 3 || got.ExpectedUsers == nil || *got.ExpectedUsers != 1200 {
		t.Fatalf("PATCH null expected_users: %+v", got)
	}
	patch(t, env, org, e.ID, `{"expected_users": 1200}`).ExpectJSON(t, http.StatusOK, &got)

	// A draft may still be planned.
	draft := validConfig("planned")
	draft["status"] = "draft"
	env.Do(t, "POST", "/v1/experiments", draft, admin...).ExpectJSON(t, http.StatusCreated, &e)
	patch(t, env, org, e.ID, `{"expected_users": 700, "sequential_tuning": 900}`).ExpectJSON(t, http.StatusOK, &got)
	if *got.ExpectedUsers != 700 || *got.SequentialTuning != 900 {
		t.Fatalf("draft patch: %+v", got)
	}
	env.Do(t, "GET", "/v1/experiments/planned/power", nil, admin...).ExpectJSON(t, http.StatusOK, &p)
	if p.NStar != 900 || p.NStarSource != "sequential_tuning" || p.Source != "org_recent" {
		t.Fatalf("draft power: N* %v from %q, data %q", p.NStar, p.NStarSource, p.Source)
	}

	for _, bad := range []any{0, 99, 1.5e9, 250.5, -1, "many"} {
		c := validConfig("bad-tuning")
		c["expected_users"] = bad
		if pr := testenv.ExpectProblem(t, env.Do(t, "POST", "/v1/experiments", c, admin...), 400); !pr.HasFieldError("expected_users") {
			t.Errorf("expected_users %v: %+v", bad, pr)
		}
	}
}

// A new experiment that sets neither N* input expects the org's distinct
// exposed users of the last 14 days (when at least 100), and its power
// answer says so; an org with fewer keeps the default.
func TestExpectedUsersDefaultsToRecentTraffic(t *testing.T) {
	f := newIngestFixture(t)
	seedPowerData(t, f)
	var e tunedBody
	f.env.Do(t, "POST", "/v1/experiments", validConfig("second"), testenv.Bearer(f.org.AdminToken)...).ExpectJSON(t, http.StatusCreated, &e)
	if e.ExpectedUsers == nil || *e.ExpectedUsers != powerUsers || e.SequentialTuning != nil {
		t.Fatalf("created %+v, want expected_users %d", e, powerUsers)
	}
	var p power.Answer
	f.env.Do(t, "GET", "/v1/experiments/second/power", nil, testenv.Bearer(f.org.AdminToken)...).ExpectJSON(t, http.StatusOK, &p)
	if p.NStar != powerUsers || p.NStarSource != "expected_users" {
		t.Fatalf("N* %v from %q", p.NStar, p.NStarSource)
	}
	// The fixture's own experiment was created before any traffic.
	p = getPower(t, f, "")
	if p.NStar != 5000 || p.NStarSource != "default" {
		t.Fatalf("first experiment: N* %v from %q", p.NStar, p.NStarSource)
	}
}
