package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/expd/expd/internal/testenv"
)

// POST /v1/assign with attributes: a user who does not match the targeting
// gets control outside the experiment and is not pinned; a pinned user
// keeps their variant after the targeting changes to exclude them.
func TestAssignAppliesTargetingAndKeepsAssignedUsers(t *testing.T) {
	env := newSDKEnv(t)
	org := env.NewOrg(t)
	cfg := validConfig("targeted")
	cfg["targeting"] = map[string]any{"plan": "pro", "country": map[string]any{"$in": []any{"FR", "DE"}}}
	exp := create(t, env, org, cfg)
	assign := func(user string, attrs map[string]any) assignBody {
		t.Helper()
		var a assignBody
		env.Do(t, "POST", "/v1/assign", map[string]any{"experiment_id": exp.ID, "user_id": user, "attributes": attrs},
			testenv.APIKey(org.PublishableKey)...).ExpectJSON(t, http.StatusOK, &a)
		return a
	}
	pro := map[string]any{"plan": "pro", "country": "FR"}
	first := map[string]string{}
	for i := range 20 {
		u := fmt.Sprintf("user-%d", i)
		in := assign(u, pro)
		if !in.InExperiment || in.ReasonCode != "bucketed" {
			t.Fatalf("%s matching: %+v, want bucketed", u, in)
		}
		first[u] = in.Variant
		out := assign("other-"+u, map[string]any{"plan": "free", "country": "FR"})
		if out.InExperiment || out.ReasonCode != "not_targeted" || out.Variant != "control" {
			t.Fatalf("%s not matching: %+v, want control, not_targeted", u, out)
		}
	}
	cfg["targeting"] = map[string]any{"plan": "enterprise"}
	putConfig(t, env, org, exp.ID, cfg)
	waitFor(t, func() bool { return assign("fresh", pro).ConfigVersion >= 2 })
	for u, v := range first {
		if got := assign(u, pro); got.Variant != v || !got.InExperiment {
			t.Errorf("%s after the targeting change: %+v, want %s in the experiment", u, got, v)
		}
	}
	if got := assign("newcomer", pro); got.ReasonCode != "not_targeted" {
		t.Errorf("new user after the targeting change: %+v, want not_targeted", got)
	}
}

// Invalid conditions are 400s naming the part, on both databases, and
// nothing is written.
func TestTargetingBadInputNamesTheField(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	for name, tc := range map[string]struct {
		targeting any
		field     string
	}{
		"not an object":    {[]any{"x"}, "targeting"},
		"unknown operator": {map[string]any{"age": map[string]any{"$gtx": 1}}, "targeting.age.$gtx"},
		"$in not an array": {map[string]any{"$and": []any{map[string]any{"plan": map[string]any{"$in": "pro"}}}}, "targeting.$and[0].plan.$in"},
		"lookbehind regex": {map[string]any{"email": map[string]any{"$regex": "(?<=a)b"}}, "targeting.email.$regex"},
		"unicode class":    {map[string]any{"email": map[string]any{"$regex": `\p{L}`}}, "targeting.email.$regex"},
		"$exists number":   {map[string]any{"plan": map[string]any{"$exists": 1}}, "targeting.plan.$exists"},
	} {
		cfg := validConfig("bad-targeting")
		cfg["targeting"] = tc.targeting
		p := testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/experiments", cfg, admin...), http.StatusBadRequest)
		if !p.HasFieldError(tc.field) {
			t.Errorf("%s: problem %+v does not name %s", name, p, tc.field)
		}
	}
	if r := env.Do(t, http.MethodGet, "/v1/experiments/bad-targeting", nil, admin...); r.Status != http.StatusNotFound {
		t.Errorf("an invalid experiment was written: %d %s", r.Status, r.Body)
	}
}
