package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
)

type secretBody struct {
	Secret      string `json:"secret"`
	CreatedAt   string `json:"created_at"`
	WebhookPath string `json:"webhook_path"`
}

func issueSecret(t *testing.T, env *testenv.Env, org testenv.Org) secretBody {
	t.Helper()
	var s secretBody
	env.Do(t, "POST", "/v1/business-events/secret", nil, testenv.Bearer(org.AdminToken)...).ExpectJSON(t, http.StatusCreated, &s)
	return s
}

// signedPost sends payload to path signed with secret as of at.
func signedPost(t *testing.T, env *testenv.Env, path, secret, msgID string, at time.Time, payload []byte) testenv.Response {
	t.Helper()
	return env.Do(t, "POST", path, payload, testenv.StandardWebhookHeaders(t, secret, msgID, at, payload)...)
}

func TestBusinessEventsSignedWebhook(t *testing.T) {
	f := newIngestFixture(t)
	s := issueSecret(t, f.env, f.org)
	if !strings.HasPrefix(s.Secret, "whsec_") || s.WebhookPath != "/v1/business-events?org="+f.org.ID {
		t.Fatalf("secret answer %+v", s)
	}
	payload, _ := json.Marshal(map[string]any{"experiment_id": "exp", "user_id": "u1", "variant": "concise", "business_metric": "conversion", "value": 1})
	msgID := "msg_" + uuid.NewString()
	r := signedPost(t, f.env, s.WebhookPath, s.Secret, msgID, time.Now(), payload)
	if r.Status != http.StatusAccepted {
		t.Fatalf("valid signature: %d %s", r.Status, r.Body)
	}
	var ack struct {
		EventID  string `json:"event_id"`
		Accepted int    `json:"accepted"`
	}
	r.JSON(t, &ack)
	if ack.EventID != msgID || ack.Accepted != 1 {
		t.Fatalf("ack %s", r.Body)
	}
	var row ingest.EventRow
	if err := f.env.DB.Where("org_id = ? AND event_id = ?", f.org.ID, msgID).Take(&row).Error; err != nil {
		t.Fatal(err)
	}
	if row.Type != "business_event" || row.ExperimentID != f.exp.ID || *row.BusinessMetric != "conversion" || *row.Value != 1 || row.Source != "webhook" {
		t.Fatalf("stored %+v", row)
	}
	// A redelivery (same webhook-id, fresh signature) is stored once.
	r = signedPost(t, f.env, s.WebhookPath, s.Secret, msgID, time.Now(), payload)
	r.JSON(t, &ack)
	if r.Status != http.StatusAccepted || ack.Accepted != 0 {
		t.Fatalf("redelivery: %d %s", r.Status, r.Body)
	}
	if n := countRows(t, f.env, "org_id = ?", f.org.ID); n != 1 {
		t.Fatalf("%d rows after redelivery, want 1", n)
	}

	other := issueSecret(t, f.env, f.env.NewOrg(t))
	wrongOrg := "/v1/business-events?org=" + uuid.NewString()
	tampered := []byte(strings.Replace(string(payload), `"value":1`, `"value":1000`, 1))
	for name, r := range map[string]testenv.Response{
		"tampered body":   f.env.Do(t, "POST", s.WebhookPath, tampered, testenv.StandardWebhookHeaders(t, s.Secret, "msg_t", time.Now(), payload)...),
		"wrong secret":    signedPost(t, f.env, s.WebhookPath, other.Secret, "msg_w", time.Now(), payload),
		"stale timestamp": signedPost(t, f.env, s.WebhookPath, s.Secret, "msg_s", time.Now().Add(-6*time.Minute), payload),
		"future":          signedPost(t, f.env, s.WebhookPath, s.Secret, "msg_f", time.Now().Add(6*time.Minute), payload),
		"unsigned":        f.env.Do(t, "POST", s.WebhookPath, payload),
		"unknown org":     signedPost(t, f.env, wrongOrg, s.Secret, "msg_u", time.Now(), payload),
		"no org":          signedPost(t, f.env, "/v1/business-events", s.Secret, "msg_n", time.Now(), payload),
	} {
		if p := testenv.ExpectProblem(t, r, 401); p.Code != "invalid_signature" {
			t.Errorf("%s: %+v", name, p)
		}
	}
	// A rotation invalidates the previous secret at once.
	rotated := issueSecret(t, f.env, f.org)
	testenv.ExpectProblem(t, signedPost(t, f.env, s.WebhookPath, s.Secret, "msg_old", time.Now(), payload), 401)
	if r := signedPost(t, f.env, s.WebhookPath, rotated.Secret, "msg_new", time.Now(), payload); r.Status != http.StatusAccepted {
		t.Fatalf("rotated secret: %d %s", r.Status, r.Body)
	}
	if n := countRows(t, f.env, "org_id = ?", f.org.ID); n != 2 {
		t.Fatalf("%d rows, want the two valid deliveries only", n)
	}
}

func TestBusinessEventsValidation(t *testing.T) {
	f := newIngestFixture(t)
	s := issueSecret(t, f.env, f.org)
	for field, payload := range map[string]string{
		"business_metric": `{"experiment_id":"exp","user_id":"u"}`,
		"experiment_id":   `{"experiment_id":"nope","user_id":"u","business_metric":"conversion"}`,
		"user_id":         `{"experiment_id":"exp","business_metric":"conversion"}`,
		"event_id":        `{"event_id":"other","experiment_id":"exp","user_id":"u","business_metric":"conversion"}`,
		"latency_ms":      `{"experiment_id":"exp","user_id":"u","business_metric":"conversion","latency_ms":3}`,
	} {
		p := testenv.ExpectProblem(t, signedPost(t, f.env, s.WebhookPath, s.Secret, "msg_"+field, time.Now(), []byte(payload)), 400)
		if !p.HasFieldError(field) {
			t.Errorf("payload %s: %+v, want an error on %s", payload, p, field)
		}
	}
	testenv.ExpectProblem(t, signedPost(t, f.env, s.WebhookPath, s.Secret, "msg_x", time.Now(), []byte(`[1]`)), 400)
	if n := countRows(t, f.env, "org_id = ?", f.org.ID); n != 0 {
		t.Fatalf("%d invalid business events stored", n)
	}
}

func TestSigningSecretIsAdminOnly(t *testing.T) {
	f := newIngestFixture(t)
	p := testenv.ExpectProblem(t, f.env.Do(t, "POST", "/v1/business-events/secret", nil, testenv.Bearer(f.org.MemberToken)...), 403)
	if p.Code != "admin_required" {
		t.Fatalf("member: %+v", p)
	}
	testenv.ExpectProblem(t, f.env.Do(t, "POST", "/v1/business-events/secret", nil, testenv.APIKey(f.org.SecretKey)...), 401)
	a, b := issueSecret(t, f.env, f.org), issueSecret(t, f.env, f.org)
	if a.Secret == b.Secret {
		t.Fatal("rotation returned the same secret")
	}
}
