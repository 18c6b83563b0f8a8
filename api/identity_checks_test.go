package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/expd/expd/api"
	"github.com/expd/expd/auth"
	"github.com/expd/expd/internal/testenv"
)

// Session tokens through the real router with every claim check on
// (CLERK_ISSUER, CLERK_AUDIENCE, EXPD_DASHBOARD_ORIGINS): a wrong iss,
// aud or azp, or no azp, is a 401, and the refused token creates no org.
func TestIdentityTokenClaimChecks(t *testing.T) {
	const iss, aud, origin = "https://clerk.example.com", "expd-api", "https://app.example.com"
	signer := testenv.Signer(t)
	env := testenv.New(t, func(d *api.Deps) {
		d.Verifier = signer.Verifier().WithChecks(auth.Checks{Issuer: iss, Audience: aud, AuthorizedParties: []string{origin}})
	})
	org := env.NewOrg(t)
	right := auth.TokenOptions{Issuer: iss, Audience: []string{aud}, AZP: origin}
	with := func(f func(*auth.TokenOptions)) auth.TokenOptions { o := right; f(&o); return o }
	cases := []struct {
		name string
		opts auth.TokenOptions
		ok   bool
	}{
		{"right iss, aud and azp", right, true},
		{"aud among others", with(func(o *auth.TokenOptions) { o.Audience = []string{"other", aud} }), true},
		{"wrong iss", with(func(o *auth.TokenOptions) { o.Issuer = "https://evil.example.com" }), false},
		{"the dev issuer", with(func(o *auth.TokenOptions) { o.Issuer = auth.DevIssuer }), false},
		{"wrong aud", with(func(o *auth.TokenOptions) { o.Audience = []string{"another-api"} }), false},
		{"no aud", with(func(o *auth.TokenOptions) { o.Audience = nil }), false},
		{"wrong azp", with(func(o *auth.TokenOptions) { o.AZP = "https://evil.example.com" }), false},
		{"no azp", with(func(o *auth.TokenOptions) { o.AZP = "" }), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The known org, and a new org the token would create on first sight.
			for _, clerkOrg := range []string{org.ClerkOrgID, "org_new_" + time.Now().Format("150405.000000000")} {
				tok, err := signer.SignWith(auth.Session{UserID: "user_claims", OrgID: clerkOrg, Role: auth.AdminRole}, time.Hour, c.opts)
				if err != nil {
					t.Fatal(err)
				}
				r := env.Do(t, "GET", "/v1/experiments", nil, testenv.Bearer(tok)...)
				if c.ok {
					if r.Status != http.StatusOK {
						t.Fatalf("accepted token: %d %s", r.Status, r.Body)
					}
					continue
				}
				if p := testenv.ExpectProblem(t, r, http.StatusUnauthorized); p.Code != api.CodeUnauthorized {
					t.Fatalf("code %q", p.Code)
				}
				if clerkOrg == org.ClerkOrgID {
					continue
				}
				var n int64
				if err := env.DB.Table("orgs").Where("clerk_org_id = ?", clerkOrg).Count(&n).Error; err != nil || n != 0 {
					t.Fatalf("a refused token created org %s: %d rows, %v", clerkOrg, n, err)
				}
			}
		})
	}
}

// The default verifier of tests and `expd dev` checks the dev issuer: a
// token of the same key under another issuer is refused.
func TestDevVerifierChecksItsIssuer(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	tok, err := env.Signer.SignWith(auth.Session{UserID: "u", OrgID: org.ClerkOrgID, Role: auth.AdminRole}, time.Hour,
		auth.TokenOptions{Issuer: "https://clerk.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	testenv.ExpectProblem(t, env.Do(t, "GET", "/v1/experiments", nil, testenv.Bearer(tok)...), http.StatusUnauthorized)
	if r := env.Do(t, "GET", "/v1/experiments", nil, testenv.Bearer(org.AdminToken)...); r.Status != http.StatusOK {
		t.Fatalf("dev token: %d %s", r.Status, r.Body)
	}
}
