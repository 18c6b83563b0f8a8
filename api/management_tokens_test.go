package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/keys"
	"github.com/expd/expd/mgmttokens"
)

type createdToken struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Role       string     `json:"role"`
	Token      string     `json:"token"`
	Prefix     string     `json:"prefix"`
	CreatedBy  string     `json:"created_by"`
	ExpiresAt  *time.Time `json:"expires_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

func createToken(t *testing.T, env *testenv.Env, admin string, body any) createdToken {
	t.Helper()
	var tok createdToken
	env.Do(t, http.MethodPost, "/v1/management-tokens", body, testenv.Bearer(admin)...).ExpectJSON(t, http.StatusCreated, &tok)
	return tok
}

// A CI pipeline's life with a management token: an admin issues it (shown
// once, stored hashed), it works on dashboard routes with its role, never
// on SDK routes, and stops working when revoked or expired; every issue
// and revocation is audited.
func TestManagementTokens(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	other := env.NewOrg(t)

	admin := createToken(t, env, org.AdminToken, map[string]any{"name": "ci deploy", "role": "admin"})
	member := createToken(t, env, org.AdminToken, map[string]any{"name": "ci read", "role": "member"})
	if !auth.IsManagementToken(admin.Token) || admin.Prefix != admin.Token[:12] || admin.Role != "admin" || admin.LastUsedAt != nil {
		t.Fatalf("created token: %+v", admin)
	}
	var stored mgmttokens.Token
	if err := env.DB.Where("id = ?", admin.ID).Take(&stored).Error; err != nil {
		t.Fatal(err)
	}
	if stored.TokenHash != auth.HashKey(admin.Token) || strings.Contains(stored.TokenHash, admin.Token) {
		t.Fatal("token not stored as its hash")
	}

	// Used on dashboard routes: an admin token may create experiments, a
	// member token may read but not do admin things.
	r := env.Do(t, http.MethodPost, "/v1/experiments", validConfig("from-ci"), testenv.Bearer(admin.Token)...)
	if r.Status != http.StatusCreated {
		t.Fatalf("create experiment with admin token: %d %s", r.Status, r.Body)
	}
	if r := env.Do(t, http.MethodGet, "/v1/experiments/from-ci", nil, testenv.Bearer(member.Token)...); r.Status != http.StatusOK {
		t.Fatalf("member token read: %d %s", r.Status, r.Body)
	}
	testenv.ExpectProblem(t, env.Do(t, http.MethodGet, "/v1/management-tokens", nil, testenv.Bearer(member.Token)...), http.StatusForbidden)
	// The org is the token's: another org's experiment is not found.
	env.Do(t, http.MethodPost, "/v1/experiments", validConfig("theirs"), testenv.Bearer(other.AdminToken)...)
	testenv.ExpectProblem(t, env.Do(t, http.MethodGet, "/v1/experiments/theirs", nil, testenv.Bearer(admin.Token)...), http.StatusNotFound)
	// A token cannot mint successors.
	testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/management-tokens", map[string]any{"name": "x", "role": "admin"}, testenv.Bearer(admin.Token)...), http.StatusForbidden)

	// Listed without the plaintext, with the last use recorded.
	r = env.Do(t, http.MethodGet, "/v1/management-tokens", nil, testenv.Bearer(admin.Token)...)
	if r.Status != http.StatusOK || strings.Contains(string(r.Body), admin.Token) || strings.Contains(string(r.Body), "token_hash") {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var list struct {
		Tokens []createdToken `json:"management_tokens"`
	}
	r.JSON(t, &list)
	if len(list.Tokens) != 2 {
		t.Fatalf("list: %+v", list)
	}
	for _, tk := range list.Tokens {
		if tk.LastUsedAt == nil {
			t.Fatalf("token %s: no last use recorded", tk.Name)
		}
	}

	// Wrong route family: a token on SDK routes, an SDK key on dashboard routes.
	testenv.ExpectProblem(t, env.Do(t, http.MethodGet, "/v1/config", nil, testenv.APIKey(admin.Token)...), http.StatusUnauthorized)
	testenv.ExpectProblem(t, env.Do(t, http.MethodGet, "/v1/config", nil, testenv.Bearer(admin.Token)...), http.StatusUnauthorized)
	for _, key := range []string{org.SecretKey, org.PublishableKey} {
		testenv.ExpectProblem(t, env.Do(t, http.MethodGet, "/v1/experiments", nil, testenv.Bearer(key)...), http.StatusUnauthorized)
		testenv.ExpectProblem(t, env.Do(t, http.MethodGet, "/v1/experiments", nil, testenv.APIKey(key)...), http.StatusUnauthorized)
	}

	// Revoked: refused at once; revoking again is harmless; another org's
	// admin cannot revoke it (404, same as unknown).
	testenv.ExpectProblem(t, env.Do(t, http.MethodDelete, "/v1/management-tokens/"+member.ID, nil, testenv.Bearer(other.AdminToken)...), http.StatusNotFound)
	for i := 0; i < 2; i++ {
		if r := env.Do(t, http.MethodDelete, "/v1/management-tokens/"+member.ID, nil, testenv.Bearer(org.AdminToken)...); r.Status != http.StatusNoContent {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
	}
	testenv.ExpectProblem(t, env.Do(t, http.MethodGet, "/v1/experiments", nil, testenv.Bearer(member.Token)...), http.StatusUnauthorized)

	// Expiry: a token past its expires_at is refused.
	soon := createToken(t, env, org.AdminToken, map[string]any{"name": "short", "role": "member", "expires_at": time.Now().Add(time.Hour)})
	if r := env.Do(t, http.MethodGet, "/v1/experiments", nil, testenv.Bearer(soon.Token)...); r.Status != http.StatusOK {
		t.Fatalf("unexpired token: %d", r.Status)
	}
	if err := env.DB.Model(&mgmttokens.Token{}).Where("id = ?", soon.ID).Update("expires_at", time.Now().Add(-time.Second)).Error; err != nil {
		t.Fatal(err)
	}
	testenv.ExpectProblem(t, env.Do(t, http.MethodGet, "/v1/experiments", nil, testenv.Bearer(soon.Token)...), http.StatusUnauthorized)

	// Audited: three issues and one revocation, by the admin's identity.
	var audit []keys.KeyAudit
	if err := env.DB.Where("org_id = ? AND scope = ?", org.ID, "management_token").Order("created_at").Find(&audit).Error; err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, a := range audit {
		actions = append(actions, a.Action)
		if !strings.HasPrefix(a.Actor, "user_admin_") {
			t.Fatalf("audit actor %q", a.Actor)
		}
	}
	if strings.Join(actions, ",") != "issued,issued,revoked,issued" {
		t.Fatalf("audit actions %v", actions)
	}
}

// Bad input on the token routes: a clear 4xx, nothing written.
func TestManagementTokensBadInput(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	cases := map[string]struct {
		body   any
		status int
		field  string
	}{
		"malformed JSON": {`{"name":`, http.StatusBadRequest, ""},
		"missing name":   {map[string]any{"role": "admin"}, http.StatusBadRequest, "name"},
		"NUL in name":    {map[string]any{"name": "a\x00b", "role": "admin"}, http.StatusBadRequest, "name"},
		"long name":      {map[string]any{"name": strings.Repeat("n", 101), "role": "admin"}, http.StatusBadRequest, "name"},
		"missing role":   {map[string]any{"name": "x"}, http.StatusBadRequest, "role"},
		"bad role":       {map[string]any{"name": "x", "role": "owner"}, http.StatusBadRequest, "role"},
		"wrong type":     {map[string]any{"name": 7, "role": "admin"}, http.StatusBadRequest, "name"},
		"past expiry":    {map[string]any{"name": "x", "role": "admin", "expires_at": "2020-01-01T00:00:00Z"}, http.StatusBadRequest, "expires_at"},
		"bad expiry":     {map[string]any{"name": "x", "role": "admin", "expires_at": "tomorrow"}, http.StatusBadRequest, ""},
		"oversized":      {map[string]any{"name": strings.Repeat("n", 2<<20), "role": "admin"}, http.StatusRequestEntityTooLarge, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/management-tokens", tc.body, testenv.Bearer(org.AdminToken)...), tc.status)
			if tc.field != "" && !p.HasFieldError(tc.field) {
				t.Fatalf("no field error for %s: %+v", tc.field, p)
			}
		})
	}
	var n int64
	env.DB.Model(&mgmttokens.Token{}).Count(&n)
	if n != 0 {
		t.Fatalf("%d tokens written by bad requests", n)
	}
	for _, id := range []string{"nope", "%00", "00000000-0000-0000-0000-000000000000"} {
		testenv.ExpectProblem(t, env.Do(t, http.MethodDelete, "/v1/management-tokens/"+id, nil, testenv.Bearer(org.AdminToken)...), http.StatusNotFound)
	}
	for _, cred := range [][]string{nil, testenv.Bearer(org.MemberToken), testenv.Bearer("expd_mt_" + strings.Repeat("A", 49))} {
		r := env.Do(t, http.MethodPost, "/v1/management-tokens", map[string]any{"name": "x", "role": "admin"}, cred...)
		if r.Status != http.StatusUnauthorized && r.Status != http.StatusForbidden {
			t.Fatalf("credential %v: %d", cred, r.Status)
		}
	}
}
