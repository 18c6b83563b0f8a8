package dashboard_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/internal/testenv"
)

// The privacy page shows the org's settings and saves them through the
// same use case as PUT /v1/privacy; a refused field is listed, the form
// keeps what was sent and nothing is saved; members are refused.
func TestPrivacyPageShowsAndSaves(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	admin := newVisitor(t, env, org.AdminToken)
	p := admin.get("/privacy")
	expect(t, p, http.StatusOK, `value="store" checked`, "1 to 30 (your plan's)", "private_key, jwt", `href="/privacy" aria-current="page"`)

	p = admin.post("/privacy", "/privacy", url.Values{"payload_policy": {"redact"}, "retention_days": {"14"},
		"pattern_name": {"employee", ""}, "pattern_regex": {"EMP-[0-9]{6}", ""}, "pattern_placeholder": {"[EMPLOYEE]", ""}})
	expect(t, p, http.StatusOK, "Saved.", `value="redact" checked`, `value="EMP-[0-9]{6}"`, `value="14"`)
	var got struct {
		PayloadPolicy  string                                      `json:"payload_policy"`
		RetentionDays  *int                                        `json:"retention_days"`
		CustomPatterns []struct{ Name, Regex, Placeholder string } `json:"custom_patterns"`
	}
	env.Do(t, http.MethodGet, "/v1/privacy", nil, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusOK, &got)
	if got.PayloadPolicy != "redact" || got.RetentionDays == nil || *got.RetentionDays != 14 || len(got.CustomPatterns) != 1 || got.CustomPatterns[0].Placeholder != "[EMPLOYEE]" {
		t.Fatalf("saved %+v", got)
	}

	for name, form := range map[string]url.Values{
		"bad regex":      {"payload_policy": {"drop"}, "pattern_name": {"x"}, "pattern_regex": {"(unclosed"}, "pattern_placeholder": {""}},
		"bad retention":  {"payload_policy": {"drop"}, "retention_days": {"many"}},
		"above the plan": {"payload_policy": {"drop"}, "retention_days": {"31"}},
		"unknown policy": {"payload_policy": {"encrypt"}},
		"no policy":      {},
	} {
		t.Run(name, func(t *testing.T) {
			p := admin.post("/privacy", "/privacy", form)
			expect(t, p, http.StatusBadRequest, "Nothing was saved")
		})
	}
	p = admin.post("/privacy", "/privacy", url.Values{"payload_policy": {"drop"}, "pattern_name": {"x"}, "pattern_regex": {"(unclosed"}, "pattern_placeholder": {""}})
	expect(t, p, http.StatusBadRequest, "custom_patterns[0].regex", `value="(unclosed"`, `value="drop" checked`)
	env.Do(t, http.MethodGet, "/v1/privacy", nil, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusOK, &got)
	if got.PayloadPolicy != "redact" {
		t.Fatalf("a refused form changed the settings: %+v", got)
	}

	// The call explorer says what its texts are stored under.
	exp := testenv.ExperimentConfig("calls")
	created, err := experiments.Store{DB: env.DB}.Create(t.Context(), org.ID, "admin", exp)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, admin.get("/experiments/"+created.ID+"/calls"), http.StatusOK, "Texts are stored under the payload policy <strong>redact</strong> since",
		"personal data shows as placeholders")

	member := newVisitor(t, env, org.MemberToken)
	expect(t, member.get("/privacy"), http.StatusForbidden, "Admins only", auth.AdminRole)
	expect(t, member.post("/experiments", "/privacy", url.Values{"payload_policy": {"store"}}), http.StatusForbidden)
	expectNot(t, member.get("/experiments"), `href="/privacy"`)
}
