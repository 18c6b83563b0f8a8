package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/api"
	"github.com/expd/expd/internal/testenv"
)

type holdoutBody struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Salt        string  `json:"salt"`
	BucketCount int     `json:"bucket_count"`
	Percent     float64 `json:"percent"`
	LayerID     *string `json:"layer_id"`
	Metrics     []struct {
		Name string `json:"name"`
	} `json:"metrics"`
}

func holdoutSpec(name string, percent float64) map[string]any {
	return map[string]any{"name": name, "salt": "holdout-salt-1", "percent": percent,
		"metrics": validConfig("x")["metrics"]}
}

func createHoldout(t *testing.T, env *testenv.Env, org testenv.Org, spec map[string]any) holdoutBody {
	t.Helper()
	var h holdoutBody
	env.Do(t, "POST", "/v1/holdouts", spec, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusCreated, &h)
	return h
}

// Holdouts: create, read, list, change percent; salt and layer_id frozen.
func TestHoldoutsCreateReadListUpdate(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	l := createLayer(t, env, org, "surface")
	spec := holdoutSpec("q4", 5)
	spec["layer_id"] = l.ID
	h := createHoldout(t, env, org, spec)
	if h.ID == "" || h.Percent != 5 || h.BucketCount != 10_000 || h.LayerID == nil || *h.LayerID != l.ID || len(h.Metrics) != 2 {
		t.Fatalf("created holdout: %+v", h)
	}
	spec["percent"] = 10
	delete(spec, "layer_id")
	delete(spec, "salt")
	var got holdoutBody
	env.Do(t, "PUT", "/v1/holdouts/"+h.ID, spec, admin...).ExpectJSON(t, http.StatusOK, &got)
	if got.Percent != 10 || got.Salt != "holdout-salt-1" || got.LayerID == nil || *got.LayerID != l.ID {
		t.Fatalf("updated holdout: %+v", got)
	}
	env.Do(t, "GET", "/v1/holdouts/"+h.ID, nil, admin...).ExpectJSON(t, http.StatusOK, &got)
	if got.Percent != 10 {
		t.Fatalf("read holdout: %+v", got)
	}
	var list struct{ Holdouts []holdoutBody }
	env.Do(t, "GET", "/v1/holdouts", nil, admin...).ExpectJSON(t, http.StatusOK, &list)
	if len(list.Holdouts) != 1 || list.Holdouts[0].ID != h.ID {
		t.Fatalf("list: %+v", list)
	}
	entries := expectActions(t, env, org, map[string]int{"holdout.created": 1, "holdout.updated": 1})
	for _, e := range entries {
		if e.After["id"] != h.ID || e.Action == "holdout.updated" && (e.Before["percent"] != 5.0 || e.After["percent"] != 10.0) {
			t.Errorf("audit entry %+v", e)
		}
	}
}

// Bad input on the holdout routes: problems naming the field, nothing
// written.
func TestHoldoutBadInput(t *testing.T) {
	env := testenv.New(t)
	org, other := env.NewOrg(t), env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	mine := createHoldout(t, env, org, holdoutSpec("mine", 5))
	theirs := createHoldout(t, env, other, holdoutSpec("theirs", 5))
	theirLayer := createLayer(t, env, other, "their-layer")
	post := func(body any, auth []string) testenv.Response {
		return env.Do(t, "POST", "/v1/holdouts", body, auth...)
	}
	with := func(k string, v any) map[string]any {
		s := holdoutSpec("x", 5)
		if v == nil {
			delete(s, k)
		} else {
			s[k] = v
		}
		return s
	}
	put := func(body any) testenv.Response { return env.Do(t, "PUT", "/v1/holdouts/"+mine.ID, body, admin...) }
	for _, c := range []struct {
		name   string
		r      testenv.Response
		status int
		field  string
		code   string
	}{
		{"malformed JSON", post(`{"name": "x",`, admin), 400, "", api.CodeMalformedJSON},
		{"percent a string", post(`{"name": "x", "salt": "holdout-salt-1", "percent": "5", "metrics": []}`, admin), 400, "percent", api.CodeValidationFailed},
		{"no percent", post(with("percent", nil), admin), 400, "percent", api.CodeValidationFailed},
		{"percent over 50", post(with("percent", 50.5), admin), 400, "percent", api.CodeValidationFailed},
		{"percent 0", post(with("percent", 0), admin), 400, "percent", api.CodeValidationFailed},
		{"negative percent", post(with("percent", -5), admin), 400, "percent", api.CodeValidationFailed},
		{"huge percent", post(with("percent", 1e308), admin), 400, "percent", api.CodeValidationFailed},
		{"percent below a bucket", post(with("percent", 0.001), admin), 400, "percent", api.CodeValidationFailed},
		{"no metrics", post(with("metrics", nil), admin), 400, "metrics", api.CodeValidationFailed},
		{"bad metric", post(with("metrics", []map[string]any{{"name": "m", "kind": "vibes"}}), admin), 400, "metrics[0].kind", api.CodeValidationFailed},
		{"no salt", post(with("salt", nil), admin), 400, "salt", api.CodeValidationFailed},
		{"NUL in name", post(with("name", "a\x00b"), admin), 400, "name", api.CodeValidationFailed},
		{"another org's layer", post(with("layer_id", theirLayer.ID), admin), 400, "layer_id", api.CodeValidationFailed},
		{"layer_id not a uuid", post(with("layer_id", "surface"), admin), 400, "layer_id", api.CodeValidationFailed},
		{"name taken", post(with("name", "mine"), admin), 400, "name", api.CodeNameTaken},
		{"oversized body", post(`{"name":"`+strings.Repeat("x", 2<<20)+`"}`, admin), 413, "", api.CodeBodyTooLarge},
		{"no credentials", post(holdoutSpec("x", 5), nil), 401, "", api.CodeUnauthorized},
		{"member", post(holdoutSpec("x", 5), testenv.Bearer(org.MemberToken)), 403, "", api.CodeAdminRequired},
		{"salt changed", put(with("salt", "another-salt-2")), 400, "salt", api.CodeValidationFailed},
		{"scope changed", put(with("layer_id", theirLayer.ID)), 400, "layer_id", api.CodeValidationFailed},
		{"percent over 50 on edit", put(with("percent", 60)), 400, "percent", api.CodeValidationFailed},
		{"another org's holdout", env.Do(t, "GET", "/v1/holdouts/"+theirs.ID, nil, admin...), 404, "", api.CodeHoldoutNotFound},
		{"edit another org's holdout", env.Do(t, "PUT", "/v1/holdouts/"+theirs.ID, holdoutSpec("x", 5), admin...), 404, "", api.CodeHoldoutNotFound},
		{"malformed id", env.Do(t, "GET", "/v1/holdouts/not-an-id", nil, admin...), 404, "", api.CodeHoldoutNotFound},
	} {
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
	var n int64
	env.DB.Table("holdouts").Where("org_id = ?", org.ID).Count(&n)
	var got holdoutBody
	env.Do(t, "GET", "/v1/holdouts/"+mine.ID, nil, admin...).JSON(t, &got)
	if n != 1 || got.Percent != 5 || got.Salt != "holdout-salt-1" {
		t.Fatalf("%d holdouts stored, %+v; want the first only, unchanged", n, got)
	}
}

// A 5 % holdout over every experiment of the org: /v1/assign gives every
// held-out user control with reason_code holdout in each experiment and
// pins none of them; the config carries the holdout's slot; users assigned
// before the holdout grows keep their variant.
func TestAssignHoldout(t *testing.T) {
	env := newSDKEnv(t)
	org := env.NewOrg(t)
	a := create(t, env, org, validConfig("exp-a"))
	b := create(t, env, org, validConfig("exp-b"))
	// Users assigned before the holdout exists keep their variant.
	before := map[string]string{}
	for i := range 100 {
		u := fmt.Sprintf("early-%d", i)
		before[u] = assignUser(t, env, org.PublishableKey, a.ID, u).Variant
	}
	h := createHoldout(t, env, org, holdoutSpec("global", 5))
	var cfg struct {
		ConfigVersion int64 `json:"config_version"`
		Experiments   []struct {
			Name     string `json:"name"`
			Holdouts []struct {
				ID         string `json:"id"`
				Start, End int
			} `json:"holdouts"`
			Sticky *struct {
				Assigned any `json:"assigned"`
			} `json:"sticky"`
		} `json:"experiments"`
	}
	waitFor(t, func() bool {
		env.Do(t, "GET", "/v1/config", nil, testenv.APIKey(org.PublishableKey)...).ExpectJSON(t, http.StatusOK, &cfg)
		return len(cfg.Experiments) == 2 && len(cfg.Experiments[0].Holdouts) == 1
	})
	for _, e := range cfg.Experiments {
		if len(e.Holdouts) != 1 || e.Holdouts[0].ID != h.ID || e.Holdouts[0].Start != 0 || e.Holdouts[0].End != 500 {
			t.Fatalf("%s holdouts %+v, want [0, 500) of %s", e.Name, e.Holdouts, h.ID)
		}
		if e.Name == "exp-a" && (e.Sticky == nil || e.Sticky.Assigned == nil) {
			t.Fatalf("exp-a has pinned users and a holdout but no assigned filter: %+v", e.Sticky)
		}
	}
	for u, v := range before {
		if got := assignUser(t, env, org.PublishableKey, a.ID, u); got.Variant != v || !got.InExperiment {
			t.Fatalf("%s assigned before the holdout: %+v, want %s in the experiment", u, got, v)
		}
	}
	// exp-a's assigned filter (the 100 early users) lets a held-out user in
	// by a false positive now and then (about 0.1 % of users at 14.4 bits
	// per member: the filter cannot tell); exp-b has no pins, so it decides
	// who is held out.
	held, falsePositives := 0, 0
	for i := range 400 {
		u := fmt.Sprintf("user-%d", i)
		ra, rb := assignUser(t, env, org.PublishableKey, a.ID, u), assignUser(t, env, org.PublishableKey, b.ID, u)
		if rb.ReasonCode == "holdout" {
			held++
			if ra.ReasonCode != "holdout" {
				falsePositives++
			} else if ra.InExperiment || ra.Variant != "control" {
				t.Fatalf("held-out %s in exp-a: %+v", u, ra)
			}
			if rb.InExperiment || rb.Variant != "control" {
				t.Fatalf("held-out %s in exp-b: %+v", u, rb)
			}
		} else if ra.ReasonCode == "holdout" {
			t.Fatalf("%s held out of exp-a only: %+v, %+v", u, ra, rb)
		}
	}
	var pinned int64
	env.DB.Table("assignments").Where("experiment_id IN ?", []string{a.ID, b.ID}).Count(&pinned)
	if held == 0 || held > 60 || falsePositives > 2 || pinned != int64(len(before)+2*(400-held)+falsePositives) {
		t.Fatalf("%d of 400 held out (%d let into exp-a by its filter), %d pins; want about 20 held out and no pin for them", held, falsePositives, pinned)
	}
	// Each new user's membership is recorded once (two experiments asked),
	// as an exposure of the holdout; the users assigned before the holdout
	// skip its step and have none.
	var sides []struct {
		Variant string
		N       int
	}
	env.DB.Table("events").Select("variant, COUNT(DISTINCT user_id) AS n").Where("experiment_id = ? AND type = 'exposure'", h.ID).
		Group("variant").Order("variant").Scan(&sides)
	var total int64
	env.DB.Table("events").Where("experiment_id = ?", h.ID).Count(&total)
	if len(sides) != 2 || sides[0].Variant != "exposed" || sides[0].N != 400-held || sides[1].Variant != "holdout" || sides[1].N != held || total != 400 {
		t.Fatalf("holdout exposures %+v (%d events); want %d exposed, %d held out, one each", sides, total, 400-held, held)
	}
	// An exposure may name the holdout, no other event may.
	ack := accepted(t, postEvents(t, env, org.PublishableKey, exposure(h.ID, "sdk-user", "exposed", time.Now()), modelCall(h.ID, "sdk-user", time.Now())))
	if ack.Accepted != 1 || len(ack.Rejected) != 1 || ack.Rejected[0].Index != 1 || !strings.Contains(ack.Rejected[0].Reason, "experiment_id") {
		t.Fatalf("exposure and model call naming the holdout: %+v; want the exposure accepted, the call refused", ack)
	}
}
