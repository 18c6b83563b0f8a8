package dashboard_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/stats"
)

func apiStatus(t *testing.T, env *testenv.Env, org testenv.Org, id string) (status, shipped string, version int) {
	t.Helper()
	var got struct {
		Status         string `json:"status"`
		ShippedVariant string `json:"shipped_variant"`
		Version        int    `json:"version"`
	}
	env.Do(t, http.MethodGet, "/v1/experiments/"+id, nil, testenv.Bearer(org.MemberToken)...).ExpectJSON(t, http.StatusOK, &got)
	return got.Status, got.ShippedVariant, got.Version
}

// Start, Stop and Ship on the results page: admins only, each behind a
// confirmation that says what users will get, through the use case the
// API's lifecycle routes call; a forged post (no token, another site, a
// member) changes nothing. The lifecycle timeline shows each change.
func TestLifecycleButtonsConfirmAndAreAdminOnly(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	exp := resultstest.Experiment(t, env.DB, org.ID, resultstest.Config("lifecycle-buttons"))
	publishRun(t, env.DB, org.ID, exp.ID, "manual-2026-11-20T10:00:00Z", stats.GatePass, resultstest.Metrics, []string{"treatment"})
	path := "/experiments/" + exp.ID
	lifecycle := path + "/lifecycle"

	member := newVisitor(t, env, org.MemberToken)
	p := member.get(path)
	expect(t, p, http.StatusOK, `id="verdict"`, `id="lifecycle"`, "<strong>created</strong>")
	expectNot(t, p, `id="ship"`, `id="stop"`, `id="start"`, `action="`+lifecycle+`"`)
	expect(t, member.post(path, lifecycle, url.Values{"action": {"ship"}, "variant": {"treatment"}, "confirm": {"yes"}}), http.StatusForbidden, "Admins only")

	admin := newVisitor(t, env, org.AdminToken)
	p = admin.get(path)
	expect(t, p, http.StatusOK, `id="stop"`, `id="ship"`, `<select id="ship-variant" name="variant">`)
	expectNot(t, p, `id="start"`) // running: nothing to start
	// Forged: no token, a wrong one, another site's origin.
	ship := url.Values{"action": {"ship"}, "variant": {"treatment"}, "confirm": {"yes"}}
	expect(t, admin.postRaw(lifecycle, ship, env.Server.URL), http.StatusForbidden, "Form expired")
	forged := url.Values{"action": {"ship"}, "variant": {"treatment"}, "confirm": {"yes"}, "csrf_token": {"not-the-cookie-token-at-all"}}
	expect(t, admin.postRaw(lifecycle, forged, env.Server.URL), http.StatusForbidden, "Form expired")
	token := csrfInput.FindStringSubmatch(admin.get(path).Body)[1]
	ship.Set("csrf_token", token)
	expect(t, admin.postRaw(lifecycle, ship, "https://evil.example"), http.StatusForbidden, "Form expired")
	if status, _, version := apiStatus(t, env, org, exp.ID); status != "running" || version != 1 {
		t.Fatalf("a refused post changed the experiment: %s, version %d", status, version)
	}

	// Without confirm: the consequence, and nothing changed yet.
	p = admin.post(path, lifecycle, url.Values{"action": {"ship"}, "variant": {"treatment"}})
	expect(t, p, http.StatusOK, "Ship variant treatment?",
		"Ship variant treatment: every user gets treatment&#39;s config from now on; the experiment stops collecting.",
		`name="confirm" value="yes"`, `id="cancel">Cancel</a>`)
	if status, _, _ := apiStatus(t, env, org, exp.ID); status != "running" {
		t.Fatalf("asking for confirmation changed the status to %s", status)
	}
	expect(t, admin.post(path, lifecycle, url.Values{"action": {"ship"}, "variant": {"nobody"}}), http.StatusBadRequest, `&#34;nobody&#34; is not a variant`)
	expect(t, admin.post(path, lifecycle, url.Values{"action": {"pause"}}), http.StatusBadRequest, "not a lifecycle action")

	// Stop, start, then ship, each confirmed.
	p = admin.post(path, lifecycle, url.Values{"action": {"stop"}})
	expect(t, p, http.StatusOK, "every user gets control (the control) from now on")
	p = admin.post(path, lifecycle, url.Values{"action": {"stop"}, "confirm": {"yes"}})
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != path {
		t.Fatalf("stop: %d %s", p.Status, p.Header.Get("Location"))
	}
	if status, _, _ := apiStatus(t, env, org, exp.ID); status != "stopped" {
		t.Fatalf("after stop: %s", status)
	}
	expect(t, admin.get(path), http.StatusOK, `id="start"`, "<strong>stopped</strong>")
	expect(t, admin.post(path, lifecycle, url.Values{"action": {"start"}}), http.StatusOK, "every user gets a variant by the weights from now on (control 50%, treatment 50%)")
	admin.post(path, lifecycle, url.Values{"action": {"start"}, "confirm": {"yes"}})
	p = admin.post(path, lifecycle, url.Values{"action": {"ship"}, "variant": {"treatment"}, "confirm": {"yes"}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("ship: %d\n%s", p.Status, p.Body)
	}
	status, shipped, version := apiStatus(t, env, org, exp.ID)
	if status != "shipped" || shipped != "treatment" || version != 4 {
		t.Fatalf("after ship: %s %q version %d, want shipped treatment at version 4", status, shipped, version)
	}
	p = admin.get(path)
	expect(t, p, http.StatusOK, `id="status">shipped: treatment</span>`, "<strong>shipped treatment</strong>")
	expectNot(t, p, `id="ship"`, `id="stop"`, `id="start"`)
	// The timeline is in order: created, stopped, started, shipped.
	events := regexp.MustCompile(`<strong>([^<]+)</strong>`).FindAllStringSubmatch(p.Body[strings.Index(p.Body, `id="lifecycle"`):], -1)
	var got []string
	for _, e := range events {
		got = append(got, html.UnescapeString(e[1]))
	}
	if strings.Join(got, ", ") != "created, stopped, started, shipped treatment" {
		t.Fatalf("timeline: %v", got)
	}
	// Shipping is final: the domain's refusal, in words, nothing changed.
	p = admin.post(path, lifecycle, url.Values{"action": {"ship"}, "variant": {"control"}, "confirm": {"yes"}})
	expect(t, p, http.StatusConflict, "Not possible in this state", "shipping is final")
}

// A weight change starts a phase: the results page lists the run's
// phases (from the stored versions, as the results route does) and the
// timeline says what the change did to each arm's share.
func TestResultsPageShowsPhasesAndWeightChanges(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	exp := resultstest.Experiment(t, env.DB, org.ID, resultstest.Config("phases-page"))
	time.Sleep(1100 * time.Millisecond) // the second version starts a phase one second later
	r := env.Do(t, http.MethodPatch, "/v1/experiments/"+exp.ID, `{"allocation": [{"variant": "control", "weight": 75}, {"variant": "treatment", "weight": 25}]}`,
		append([]string{"Content-Type", "application/merge-patch+json"}, testenv.Bearer(org.AdminToken)...)...)
	if r.Status != http.StatusOK {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	time.Sleep(1100 * time.Millisecond) // the run's window ends after the change (publishRun ends it at the whole second)
	publishRun(t, env.DB, org.ID, exp.ID, "manual-2026-11-20T10:00:00Z", stats.GatePass, resultstest.Metrics, []string{"treatment"})
	p := newVisitor(t, env, org.MemberToken).get("/experiments/" + exp.ID)
	expect(t, p, http.StatusOK, `id="phases"`, "Phases of this run's window",
		`<th scope="row">1</th>`, `<td>control 50%, treatment 50%</td>`, `<th scope="row">2</th>`, `<td>control 75%, treatment 25%</td>`,
		"<strong>weights changed</strong> · version 2: control 50%, treatment 50% → control 75%, treatment 25%")
	if n := strings.Count(p.Body, `<th scope="row">`); n < 2 {
		t.Fatalf("%d row headers", n)
	}
}
