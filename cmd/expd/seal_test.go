package main

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/evaluators"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/secrets"
	"github.com/expd/expd/webhooks"
)

// storedSecrets is one org's secrets as an older version left them.
type storedSecrets struct {
	org, business, endpointID, endpoint, judgeID string
}

// plantClearSecrets issues a business-event secret, a webhook endpoint
// and a judge for a new org under keys, then writes both signing secrets
// back in clear, as versions before sealing stored them.
func plantClearSecrets(t *testing.T, db *gorm.DB, keys *secrets.Keyring) storedSecrets {
	t.Helper()
	ctx := t.Context()
	org := testenv.NewOrg(t, db, testenv.Signer(t)).ID
	biz, err := ingest.RotateSigningSecret(ctx, db, keys, org, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ep, err := webhooks.Create(ctx, db, keys, org, webhooks.NewEndpoint{URL: "https://hooks.example.com/" + org, Actor: "user_1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rate := 0.5
	judge, err := evaluators.Store{DB: db, Secrets: keys}.Create(ctx, org, evaluators.Spec{
		Name: "judge", Score: "helpfulness", Kind: evaluators.KindJudge, SamplingRate: &rate,
		DailyBudget: &evaluators.Budget{MaxEvaluations: 10},
		Endpoint:    &evaluators.Endpoint{BaseURL: "http://127.0.0.1:9/v1", Model: "gpt-4o-mini", APIKey: "sk-judge-" + org},
		Template:    "Rate the answer from 1 to 5.\nQuestion: {{input}}\nAnswer: {{output}}", Range: []float64{1, 5},
	}, evaluators.Rules{AllowPrivate: true}, "user_1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "UPDATE business_event_secrets SET secret = ? WHERE org_id = ?", biz.Secret, org)
	mustExec(t, db, "UPDATE webhook_endpoints SET secret = ? WHERE id = ?", ep.Secret, ep.ID)
	return storedSecrets{org: org, business: biz.Secret, endpointID: ep.ID, endpoint: ep.Secret, judgeID: judge.ID}
}

func mustExec(t *testing.T, db *gorm.DB, sql string, args ...any) {
	t.Helper()
	if err := db.Exec(sql, args...).Error; err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func ring(t *testing.T, current, previous string) *secrets.Keyring {
	t.Helper()
	k, err := secrets.Parse(current, previous)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newKey(t *testing.T) string {
	t.Helper()
	k, err := secrets.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// usable checks that s's secrets verify and sign under keys: a business
// event signed with the issued secret verifies, the endpoint's target
// carries the issued secret, the judge's key opens.
func usable(t *testing.T, db *gorm.DB, keys *secrets.Keyring, s storedSecrets) error {
	t.Helper()
	ctx := t.Context()
	payload := []byte(`{"user_id":"u1","experiment_id":"e","name":"purchase","value":1}`)
	h := testenv.StandardWebhookHeaders(t, s.business, "msg_"+s.org, time.Now(), payload)
	hdr := http.Header{}
	for i := 0; i+1 < len(h); i += 2 {
		hdr.Set(h[i], h[i+1])
	}
	if err := ingest.VerifyBusinessEvent(ctx, db, keys, s.org, payload, hdr); err != nil {
		return err
	}
	target, err := webhooks.LoadTarget(ctx, db, keys, s.endpointID)
	if err != nil {
		return err
	}
	if target.Secret != s.endpoint {
		return errors.New("the endpoint's target carries another secret")
	}
	loaded, err := evaluators.Load(ctx, db, keys, s.judgeID)
	if err != nil {
		return err
	}
	if loaded.Spec.Endpoint == nil || loaded.Spec.Endpoint.APIKey != "sk-judge-"+s.org {
		return errors.New("the judge's key opened to another value")
	}
	return nil
}

// clearIn lists the columns that hold any of s's secrets in clear.
func clearIn(t *testing.T, db *gorm.DB, s storedSecrets) []string {
	t.Helper()
	var hits []string
	for _, needle := range []string{s.business, s.endpoint, "whsec_", "sk-judge-"} {
		for _, h := range testenv.ColumnsContaining(t, db, needle) {
			if !slices.Contains(hits, h) {
				hits = append(hits, h)
			}
		}
	}
	slices.Sort(hits)
	return hits
}

func TestMigrateSealsStoredSecretsAndRotates(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	oldKey := newKey(t)
	old := ring(t, oldKey, "")
	a, b := plantClearSecrets(t, db, old), plantClearSecrets(t, db, old)
	if hits := clearIn(t, db, a); !slices.Equal(hits, []string{"business_event_secrets.secret", "webhook_endpoints.secret"}) {
		t.Fatalf("planted clear secrets found in %v, want both signing-secret columns", hits)
	}
	// Without a key the clear secrets cannot be sealed: the step fails
	// and says what to set.
	if _, err := migrate(ctx, db, &secrets.Keyring{}); !errors.Is(err, secrets.ErrNoKey) || !strings.Contains(err.Error(), "EXPD_SECRETS_KEY") {
		t.Fatalf("migrate without a key over clear secrets: %v", err)
	}
	// A server not yet migrated still verifies with the clear value.
	if err := usable(t, db, old, a); err != nil {
		t.Fatalf("clear secrets before migrate: %v", err)
	}

	m, err := migrate(ctx, db, old)
	if err != nil {
		t.Fatal(err)
	}
	if m.Secrets != (secrets.Tally{Sealed: 4}) {
		t.Fatalf("first migrate: %+v, want 4 sealed (2 orgs x business + endpoint)", m.Secrets)
	}
	if hits := append(clearIn(t, db, a), clearIn(t, db, b)...); len(hits) != 0 {
		t.Fatalf("clear secrets after migrate in %v", hits)
	}
	for _, s := range []storedSecrets{a, b} {
		if err := usable(t, db, old, s); err != nil {
			t.Fatalf("sealed secrets: %v", err)
		}
	}
	if m, err = migrate(ctx, db, old); err != nil || m.Secrets != (secrets.Tally{}) {
		t.Fatalf("second migrate: %+v, %v; want nothing to do", m.Secrets, err)
	}
	// Without a key, sealed values are left alone.
	if m, err = migrate(ctx, db, &secrets.Keyring{}); err != nil || m.Secrets != (secrets.Tally{}) {
		t.Fatalf("migrate without a key over sealed secrets: %+v, %v", m.Secrets, err)
	}

	// Rotation: the new key with the old one as previous; migrate seals
	// every secret again, judges' keys included, and the old key can go.
	newK := newKey(t)
	if m, err = migrate(ctx, db, ring(t, newK, oldKey)); err != nil || m.Secrets != (secrets.Tally{Resealed: 6}) {
		t.Fatalf("migrate during rotation: %+v, %v; want 6 sealed again", m.Secrets, err)
	}
	onlyNew := ring(t, newK, "")
	for _, s := range []storedSecrets{a, b} {
		if err := usable(t, db, onlyNew, s); err != nil {
			t.Fatalf("after rotation, under the new key alone: %v", err)
		}
		if err := usable(t, db, old, s); !errors.Is(err, secrets.ErrUnknownKey) {
			t.Fatalf("after rotation, under the old key alone: %v, want ErrUnknownKey", err)
		}
	}
	// A value that opens under no held key is counted, not fatal.
	if m, err = migrate(ctx, db, ring(t, newKey(t), "")); err != nil || m.Secrets != (secrets.Tally{Lost: 6}) {
		t.Fatalf("migrate under an unrelated key: %+v, %v", m.Secrets, err)
	}

	// A sealed value copied to another row does not open there.
	mustExec(t, db, "UPDATE business_event_secrets SET secret = (SELECT secret FROM business_event_secrets WHERE org_id = ?) WHERE org_id = ?", a.org, b.org)
	mustExec(t, db, "UPDATE webhook_endpoints SET secret = (SELECT secret FROM webhook_endpoints WHERE id = ?) WHERE id = ?", a.endpointID, b.endpointID)
	stolen := storedSecrets{org: b.org, business: a.business, endpointID: b.endpointID, endpoint: a.endpoint, judgeID: b.judgeID}
	if err := usable(t, db, onlyNew, stolen); !errors.Is(err, secrets.ErrCorrupt) {
		t.Fatalf("business secret copied to another org's row: %v, want ErrCorrupt", err)
	}
	if _, err := webhooks.LoadTarget(ctx, db, onlyNew, b.endpointID); !errors.Is(err, secrets.ErrCorrupt) {
		t.Fatalf("endpoint secret copied to another endpoint: %v, want ErrCorrupt", err)
	}
}

// `expd api` refuses to start without CLERK_ISSUER; `expd dev` with a
// real identity provider may run without it.
func TestIdentityVerifierRequiresAnIssuerOutsideDev(t *testing.T) {
	cfg := Config{ClerkJWTKey: string(testenv.Signer(t).PublicPEM())}
	if _, err := identityVerifier(t.Context(), cfg, false); err == nil || !strings.Contains(err.Error(), "CLERK_ISSUER is required") {
		t.Fatalf("api without CLERK_ISSUER: %v", err)
	}
	if _, err := identityVerifier(t.Context(), cfg, true); err != nil {
		t.Fatalf("dev without CLERK_ISSUER: %v", err)
	}
	cfg.ClerkIssuer = "https://clerk.example.com"
	if _, err := identityVerifier(t.Context(), cfg, false); err != nil {
		t.Fatalf("api with CLERK_ISSUER: %v", err)
	}
}
