package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/expd/expd/api"
	"github.com/expd/expd/internal/testenv"
)

// The signing secrets issued through the API are in their answer only:
// no column of the database holds them in clear, and they still verify
// and sign.
func TestSigningSecretsAreSealedAtRest(t *testing.T) {
	f := newIngestFixture(t, func(d *api.Deps) { d.Resolver = publicDNS{} })
	env, org := f.env, f.org
	biz := issueSecret(t, env, org)
	ep := createEndpoint(t, env, org, map[string]any{"url": "https://hooks.example.com/sealed"})
	for _, secret := range []string{biz.Secret, ep.Secret, "whsec_"} {
		if hits := testenv.ColumnsContaining(t, env.DB, secret); len(hits) != 0 {
			t.Fatalf("%q stored in clear in %v", secret, hits)
		}
	}
	payload := []byte(`{"experiment_id":"exp","user_id":"u1","variant":"concise","business_metric":"conversion","value":1}`)
	if r := signedPost(t, env, biz.WebhookPath, biz.Secret, "msg_sealed", time.Now(), payload); r.Status != http.StatusAccepted {
		t.Fatalf("signed with the issued secret: %d %s", r.Status, r.Body)
	}
	testenv.ExpectProblem(t, signedPost(t, env, biz.WebhookPath, ep.Secret, "msg_other", time.Now(), payload), http.StatusUnauthorized)
}

// Without EXPD_SECRETS_KEY no signing secret is issued, and nothing is
// stored.
func TestSigningSecretsNeedASecretsKey(t *testing.T) {
	env := newSDKEnv(t, func(d *api.Deps) { d.Resolver, d.Secrets = publicDNS{}, nil })
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	count := func(table string) int64 {
		var n int64
		if err := env.DB.Table(table).Where("org_id = ?", org.ID).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	audited := count("audit_log")
	for _, r := range []testenv.Response{
		env.Do(t, "POST", "/v1/business-events/secret", nil, admin...),
		env.Do(t, "POST", "/v1/webhook-endpoints", map[string]any{"url": "https://hooks.example.com/a"}, admin...),
	} {
		if p := testenv.ExpectProblem(t, r, http.StatusConflict); p.Code != api.CodeSecretsNotConfigured {
			t.Fatalf("code %q, want %q", p.Code, api.CodeSecretsNotConfigured)
		}
	}
	if b, w, a := count("business_event_secrets"), count("webhook_endpoints"), count("audit_log"); b != 0 || w != 0 || a != audited {
		t.Fatalf("stored %d secrets, %d endpoints, %d audit entries; want none", b, w, a-audited)
	}
}
