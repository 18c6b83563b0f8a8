package api_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/expd/expd/internal/testenv"
)

type auditEntry struct {
	ID           string         `json:"id"`
	ExperimentID string         `json:"experiment_id"`
	Action       string         `json:"action"`
	Actor        string         `json:"actor"`
	WorkflowID   string         `json:"workflow_id"`
	Summary      string         `json:"summary"`
	Before       map[string]any `json:"before"`
	After        map[string]any `json:"after"`
}

type auditPage struct {
	Entries []auditEntry `json:"entries"`
	Next    string       `json:"next_cursor"`
}

func listAudit(t *testing.T, env *testenv.Env, org testenv.Org, query url.Values) auditPage {
	t.Helper()
	var p auditPage
	env.Do(t, "GET", "/v1/audit?"+query.Encode(), nil, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusOK, &p)
	return p
}

// expectActions checks that the org's audit log has, for each action,
// the number of entries want gives, every one by the org's admin.
func expectActions(t *testing.T, env *testenv.Env, org testenv.Org, want map[string]int) []auditEntry {
	t.Helper()
	var all []auditEntry
	for action, n := range want {
		page := listAudit(t, env, org, url.Values{"action": {action}})
		if len(page.Entries) != n {
			t.Fatalf("%s: %d entries %+v; want %d", action, len(page.Entries), page.Entries, n)
		}
		for _, e := range page.Entries {
			if e.Actor != "user_admin_"+org.ClerkOrgID {
				t.Errorf("%s entry by %q; want the admin", action, e.Actor)
			}
		}
		all = append(all, page.Entries...)
	}
	return all
}

func TestAuditRecordsExperimentChangesNewestFirst(t *testing.T) {
	env := newSDKEnv(t)
	org := env.NewOrg(t)
	a := create(t, env, org, validConfig("audited"))
	cfg := validConfig("audited")
	cfg["allocation"] = allocation("control", 20, "concise", 80)
	putConfig(t, env, org, a.ID, cfg)
	b := create(t, env, org, validConfig("other"))

	// The two oldest entries are the org's keys, issued by testenv.NewOrg.
	all := listAudit(t, env, org, url.Values{})
	if len(all.Entries) != 5 || all.Entries[3].Action != "key.rotated" || all.Entries[4].Action != "key.rotated" || all.Entries[0].ExperimentID != b.ID || all.Entries[1].Action != "experiment.updated" || all.Entries[2].Action != "experiment.created" {
		t.Fatalf("entries newest first: %+v", all.Entries)
	}
	upd := all.Entries[1]
	if upd.Actor != "user_admin_"+org.ClerkOrgID || upd.Before["version"] != 1.0 || upd.After["version"] != 2.0 {
		t.Fatalf("update entry: %+v", upd)
	}

	// Filter by experiment (by name), one entry per page.
	p1 := listAudit(t, env, org, url.Values{"experiment_id": {"audited"}, "limit": {"1"}})
	if len(p1.Entries) != 1 || p1.Entries[0].Action != "experiment.updated" || p1.Next == "" {
		t.Fatalf("page 1: %+v", p1)
	}
	p2 := listAudit(t, env, org, url.Values{"experiment_id": {a.ID}, "limit": {"1"}, "cursor": {p1.Next}})
	if len(p2.Entries) != 1 || p2.Entries[0].Action != "experiment.created" || p2.Next != "" {
		t.Fatalf("page 2: %+v", p2)
	}

	// Another org sees none of it (only its own two keys).
	other := env.NewOrg(t)
	if got := listAudit(t, env, other, url.Values{}); len(got.Entries) != 2 || got.Entries[0].Action != "key.rotated" || got.Entries[1].Action != "key.rotated" {
		t.Fatalf("other org sees %+v", got.Entries)
	}
}

func TestAuditBadInput(t *testing.T) {
	env := newSDKEnv(t)
	org := env.NewOrg(t)
	other := env.NewOrg(t)
	theirs := create(t, env, other, validConfig("theirs"))
	admin := testenv.Bearer(org.AdminToken)
	cases := []struct {
		name, query string
		headers     []string
		status      int
		field       string
	}{
		{"zero limit", "limit=0", admin, 400, "limit"},
		{"text limit", "limit=ten", admin, 400, "limit"},
		{"huge limit", "limit=99999999999999999999", admin, 400, "limit"},
		{"forged cursor", "cursor=bm90LWEtY3Vyc29y", admin, 400, "cursor"},
		{"NUL action", "action=%00", admin, 400, "action"},
		{"empty experiment", "experiment_id=", admin, 400, "experiment_id"},
		{"another org's experiment", "experiment_id=" + theirs.ID, admin, 404, ""},
		{"member", "", testenv.Bearer(org.MemberToken), 403, ""},
		{"no credentials", "", nil, 401, ""},
		{"a key instead of a session", "", []string{"X-API-Key", org.SecretKey}, 401, ""},
	}
	for _, c := range cases {
		p := testenv.ExpectProblem(t, env.Do(t, "GET", "/v1/audit?"+c.query, nil, c.headers...), c.status)
		if c.field != "" && !p.HasFieldError(c.field) {
			t.Errorf("%s: want error on %q, got %+v", c.name, c.field, p.Errors)
		}
	}
}
