package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/audit"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/mgmttokens"
)

// Management tokens in the org's audit log (GET /v1/audit): creation and
// revocation by the admin who did it, and a revoked or expired token that
// is presented, once per token and hour however often it is retried. No
// entry carries the token or its hash.
func TestManagementTokenEventsAreAudited(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	adminID := "user_admin_" // the admin session's user id starts so (testenv.NewOrg)

	revoked := createToken(t, env, org.AdminToken, map[string]any{"name": "ci revoked", "role": "admin"})
	expired := createToken(t, env, org.AdminToken, map[string]any{"name": "ci expired", "role": "member",
		"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	live := createToken(t, env, org.AdminToken, map[string]any{"name": "ci live", "role": "member"})
	if r := env.Do(t, http.MethodDelete, "/v1/management-tokens/"+revoked.ID, nil, testenv.Bearer(org.AdminToken)...); r.Status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	if err := env.DB.Model(&mgmttokens.Token{}).Where("id = ?", expired.ID).Update("expires_at", time.Now().Add(-time.Minute)).Error; err != nil {
		t.Fatal(err)
	}
	for range 3 { // a CI job retrying with a dead token
		for _, tok := range []string{revoked.Token, expired.Token} {
			testenv.ExpectProblem(t, env.Do(t, http.MethodGet, "/v1/experiments", nil, testenv.Bearer(tok)...), http.StatusUnauthorized)
		}
	}
	if r := env.Do(t, http.MethodGet, "/v1/experiments", nil, testenv.Bearer(live.Token)...); r.Status != http.StatusOK {
		t.Fatalf("live token: %d %s", r.Status, r.Body)
	}

	for _, c := range []struct {
		action, tokenID, actor, summary string
		n                               int
	}{
		{audit.ManagementTokenCreated, revoked.ID, adminID, `"ci revoked" (admin`, 1},
		{audit.ManagementTokenCreated, expired.ID, adminID, `"ci expired" (member`, 1},
		{audit.ManagementTokenCreated, live.ID, adminID, `"ci live" (member`, 1},
		{audit.ManagementTokenRevoked, revoked.ID, adminID, `"ci revoked"`, 1},
		{audit.ManagementTokenRefused, revoked.ID, "management_token:" + revoked.ID, "revoked management token", 1},
		{audit.ManagementTokenRefused, expired.ID, "management_token:" + expired.ID, "expired management token", 1},
		{audit.ManagementTokenRefused, live.ID, "", "", 0},
		{audit.ManagementTokenRevoked, live.ID, "", "", 0},
	} {
		t.Run(c.action+" "+c.tokenID, func(t *testing.T) {
			r := env.Do(t, http.MethodGet, "/v1/audit?action="+c.action, nil, testenv.Bearer(org.AdminToken)...)
			if r.Status != http.StatusOK {
				t.Fatalf("audit: %d %s", r.Status, r.Body)
			}
			for _, secret := range []string{revoked.Token, expired.Token, live.Token, "token_hash"} {
				if strings.Contains(string(r.Body), secret) {
					t.Fatalf("the audit log shows a token or its hash: %s", r.Body)
				}
			}
			var page struct {
				Entries []struct {
					Actor, Summary string
					After          struct{ ID string }
				}
			}
			r.JSON(t, &page)
			n := 0
			for _, e := range page.Entries {
				if e.After.ID != c.tokenID {
					continue
				}
				n++
				if !strings.HasPrefix(e.Actor, c.actor) || !strings.Contains(e.Summary, c.summary) {
					t.Errorf("entry actor %q summary %q, want %q… and %q", e.Actor, e.Summary, c.actor, c.summary)
				}
			}
			if n != c.n {
				t.Errorf("%d entries, want %d: %s", n, c.n, r.Body)
			}
		})
	}
}
