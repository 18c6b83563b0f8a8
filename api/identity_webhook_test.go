package api_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/expd/expd/api"
	"github.com/expd/expd/auth"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/workflows"
)

const identityPath = "/v1/webhooks/identity-provider"

var svixSeq atomic.Int64

// clerk builds a Clerk event envelope.
func clerk(typ string, at int64, data map[string]any) map[string]any {
	return map[string]any{"type": typ, "object": "event", "timestamp": at, "instance_id": "ins_test", "data": data}
}

func clerkUser(id, email string, updated int64) map[string]any {
	return map[string]any{"id": id, "object": "user", "first_name": "Ada", "last_name": "Lovelace",
		"primary_email_address_id": "idn_1", "updated_at": updated, "created_at": 1000,
		"email_addresses": []map[string]any{{"id": "idn_0", "email_address": "old@example.com"}, {"id": "idn_1", "email_address": email}}}
}

func clerkOrg(id, name string, updated int64) map[string]any {
	return map[string]any{"id": id, "object": "organization", "name": name, "slug": "slug-" + id, "updated_at": updated, "created_at": 1000}
}

func clerkMembership(id, orgID, userID, role string, updated int64) map[string]any {
	return map[string]any{"id": id, "object": "organization_membership", "role": role, "updated_at": updated, "created_at": 1000,
		"organization":     map[string]any{"id": orgID, "name": "embedded", "slug": "embedded"},
		"public_user_data": map[string]any{"user_id": userID, "identifier": "x@example.com"}}
}

func clerkDeleted(object, id string) map[string]any {
	return map[string]any{"id": id, "object": object, "deleted": true}
}

// deliver signs and posts an identity event, waits for its workflow and
// returns whether it changed the store.
func (e *webhookEnv) deliver(t *testing.T, event map[string]any) bool {
	t.Helper()
	id := fmt.Sprintf("msg_%s_%d", e.Temporal.TaskQueue, svixSeq.Add(1))
	body := testenv.Marshal(t, event)
	r := e.Do(t, "POST", identityPath, body, testenv.SvixHeaders(t, e.SvixSecret, id, time.Now(), body)...)
	if r.Status != http.StatusNoContent {
		t.Fatalf("delivery %s: %d %s", event["type"], r.Status, r.Body)
	}
	var res workflows.IdentitySyncResult
	e.waitWorkflow(t, workflows.IdentitySyncID(id), &res)
	return res.Applied
}

func findByClerk[T any](t *testing.T, e *webhookEnv, column, id string) T {
	t.Helper()
	var rows []T
	if err := e.DB.Where(column+" = ?", id).Find(&rows).Error; err != nil || len(rows) != 1 {
		t.Fatalf("%s %s: %d rows, %v", column, id, len(rows), err)
	}
	return rows[0]
}

func TestIdentityWebhookSignature(t *testing.T) {
	t.Parallel()
	e := newWebhookEnv(t, nil)
	body := testenv.Marshal(t, clerk("user.created", 1000, clerkUser("user_sig", "sig@example.com", 1000)))
	now := time.Now()
	tampered := append(append([]byte(nil), body[:len(body)-1]...), ' ', '}')

	cases := map[string]struct {
		body    []byte
		headers []string
	}{
		"tampered":       {tampered, testenv.SvixHeaders(t, e.SvixSecret, "msg_t", now, body)},
		"wrong secret":   {body, testenv.SvixHeaders(t, testenv.WebhookSecret(t), "msg_w", now, body)},
		"stale":          {body, testenv.SvixHeaders(t, e.SvixSecret, "msg_s", now.Add(-6*time.Minute), body)},
		"future":         {body, testenv.SvixHeaders(t, e.SvixSecret, "msg_f", now.Add(6*time.Minute), body)},
		"missing header": {body, testenv.SvixHeaders(t, e.SvixSecret, "msg_m", now, body)[:4]},
		"no headers":     {body, nil},
	}
	for name, tc := range cases {
		p := testenv.ExpectProblem(t, e.Do(t, "POST", identityPath, tc.body, tc.headers...), http.StatusUnauthorized)
		if p.Code != "invalid_signature" {
			t.Errorf("%s: code %q", name, p.Code)
		}
	}
	var users int64
	e.DB.Model(&orgs.User{}).Count(&users)
	if users != 0 {
		t.Fatalf("%d users stored from rejected deliveries", users)
	}
	if !e.deliver(t, clerk("user.created", 1000, clerkUser("user_sig", "sig@example.com", 1000))) {
		t.Fatal("valid delivery not applied")
	}

	// Without a configured secret nothing can be verified.
	bare := testenv.New(t)
	testenv.ExpectProblem(t, bare.Do(t, "POST", identityPath, body, testenv.SvixHeaders(t, e.SvixSecret, "msg_n", now, body)...), http.StatusUnauthorized)
}

func TestIdentityWebhookCreateUpdateDeleteEachKind(t *testing.T) {
	t.Parallel()
	e := newWebhookEnv(t, nil)

	e.deliver(t, clerk("user.created", 1000, clerkUser("user_k", "k@example.com", 1000)))
	e.deliver(t, clerk("user.updated", 2000, clerkUser("user_k", "k2@example.com", 2000)))
	if u := findByClerk[orgs.User](t, e, "clerk_user_id", "user_k"); u.Email != "k2@example.com" || u.FirstName != "Ada" || u.ID == "" {
		t.Fatalf("user %+v", u)
	}
	e.deliver(t, clerk("organization.created", 1000, clerkOrg("org_k", "Kind Org", 1000)))
	e.deliver(t, clerk("organization.updated", 2000, clerkOrg("org_k", "Kind Org Renamed", 2000)))
	o := findByClerk[orgs.Org](t, e, "clerk_org_id", "org_k")
	if o.Name != "Kind Org Renamed" || o.Slug != "slug-org_k" || o.Plan != "free" {
		t.Fatalf("org %+v", o)
	}
	e.deliver(t, clerk("organizationMembership.created", 1000, clerkMembership("orgmem_k", "org_k", "user_k", "org:member", 1000)))
	e.deliver(t, clerk("organizationMembership.updated", 2000, clerkMembership("orgmem_k", "org_k", "user_k", "org:admin", 2000)))
	if m := findByClerk[orgs.Membership](t, e, "clerk_membership_id", "orgmem_k"); m.Role != "org:admin" || m.OrgID != o.ID {
		t.Fatalf("membership %+v", m)
	}

	e.deliver(t, clerk("organizationMembership.deleted", 3000, clerkMembership("orgmem_k", "org_k", "user_k", "org:admin", 2000)))
	if m := findByClerk[orgs.Membership](t, e, "clerk_membership_id", "orgmem_k"); m.DeletedAt == nil {
		t.Fatal("membership not soft-deleted")
	}
	e.deliver(t, clerk("user.deleted", 4000, clerkDeleted("user", "user_k")))
	e.deliver(t, clerk("organization.deleted", 5000, clerkDeleted("organization", "org_k")))
	if u := findByClerk[orgs.User](t, e, "clerk_user_id", "user_k"); u.DeletedAt == nil || u.Email != "k2@example.com" {
		t.Fatalf("user after delete %+v", u)
	}
	if o := findByClerk[orgs.Org](t, e, "clerk_org_id", "org_k"); o.DeletedAt == nil {
		t.Fatal("org not soft-deleted")
	}
}

func TestIdentityWebhookOutOfOrderAndReplayed(t *testing.T) {
	t.Parallel()
	e := newWebhookEnv(t, nil)

	// Membership first: its org and user exist as placeholders.
	if !e.deliver(t, clerk("organizationMembership.created", 3000, clerkMembership("orgmem_o", "org_o", "user_o", "org:admin", 3000))) {
		t.Fatal("membership before its org not applied")
	}
	// Update before create.
	e.deliver(t, clerk("organization.updated", 2000, clerkOrg("org_o", "Newest", 2000)))
	if e.deliver(t, clerk("organization.created", 1000, clerkOrg("org_o", "Oldest", 1000))) {
		t.Fatal("late create applied over a newer update")
	}
	e.deliver(t, clerk("user.created", 1000, clerkUser("user_o", "o@example.com", 1000)))
	o := findByClerk[orgs.Org](t, e, "clerk_org_id", "org_o")
	u := findByClerk[orgs.User](t, e, "clerk_user_id", "user_o")
	m := findByClerk[orgs.Membership](t, e, "clerk_membership_id", "orgmem_o")
	if o.Name != "Newest" || u.Email != "o@example.com" || m.OrgID != o.ID || m.UserID != u.ID || m.Role != "org:admin" {
		t.Fatalf("state: org %+v user %+v membership %+v", o, u, m)
	}

	// The same message delivered again (same svix-id): 204, no second run.
	body := testenv.Marshal(t, clerk("organization.updated", 9000, clerkOrg("org_o", "Replayed", 9000)))
	headers := testenv.SvixHeaders(t, e.SvixSecret, "msg_replay_"+e.Temporal.TaskQueue, time.Now(), body)
	for i := 0; i < 3; i++ {
		if r := e.Do(t, "POST", identityPath, body, headers...); r.Status != http.StatusNoContent {
			t.Fatalf("delivery %d: %d %s", i, r.Status, r.Body)
		}
	}
	var res workflows.IdentitySyncResult
	e.waitWorkflow(t, workflows.IdentitySyncID("msg_replay_"+e.Temporal.TaskQueue), &res)
	if !res.Applied || findByClerk[orgs.Org](t, e, "clerk_org_id", "org_o").Name != "Replayed" {
		t.Fatalf("replayed message: %+v", res)
	}
	// A different message with the same content is a no-op.
	if e.deliver(t, clerk("organization.updated", 9000, clerkOrg("org_o", "Replayed", 9000))) {
		t.Fatal("identical change applied twice")
	}
}

func TestIdentityWebhookOrgIsTheOneTokensResolveTo(t *testing.T) {
	t.Parallel()
	e := newWebhookEnv(t, nil)
	token := func(clerkOrg string) []string {
		return testenv.Bearer(testenv.Token(t, e.Signer, auth.Session{UserID: "user_tok", OrgID: clerkOrg, OrgSlug: "from-token", Role: auth.AdminRole}, time.Hour))
	}

	// Webhook first, then a token naming the org.
	e.deliver(t, clerk("organization.created", 1000, clerkOrg("org_first_hook", "Hook Org", 1000)))
	if r := e.Do(t, "GET", "/v1/billing/summary", nil, token("org_first_hook")...); r.Status != http.StatusOK {
		t.Fatalf("summary: %d %s", r.Status, r.Body)
	}
	if o := findByClerk[orgs.Org](t, e, "clerk_org_id", "org_first_hook"); o.Name != "Hook Org" {
		t.Fatalf("token request replaced the synced org: %+v", o)
	}

	// Token first, then the webhook enriches the same row.
	if r := e.Do(t, "GET", "/v1/billing/summary", nil, token("org_first_token")...); r.Status != http.StatusOK {
		t.Fatalf("summary: %d %s", r.Status, r.Body)
	}
	before := findByClerk[orgs.Org](t, e, "clerk_org_id", "org_first_token")
	e.deliver(t, clerk("organization.created", 1000, clerkOrg("org_first_token", "Token Org", 1000)))
	after := findByClerk[orgs.Org](t, e, "clerk_org_id", "org_first_token")
	if after.ID != before.ID || after.Name != "Token Org" || before.Name != "from-token" {
		t.Fatalf("before %+v after %+v", before, after)
	}

	// A deleted org no longer accepts its tokens.
	e.deliver(t, clerk("organization.deleted", 2000, clerkDeleted("organization", "org_first_token")))
	testenv.ExpectProblem(t, e.Do(t, "GET", "/v1/billing/summary", nil, token("org_first_token")...), http.StatusUnauthorized)
}

func TestIdentityWebhookIgnoresOtherTypesAndRejectsBrokenData(t *testing.T) {
	t.Parallel()
	e := newWebhookEnv(t, nil)
	send := func(event map[string]any) testenv.Response {
		body := testenv.Marshal(t, event)
		return e.Do(t, "POST", identityPath, body, testenv.SvixHeaders(t, e.SvixSecret, fmt.Sprintf("msg_x_%d", svixSeq.Add(1)), time.Now(), body)...)
	}
	for _, typ := range []string{"session.created", "email.created", "organizationInvitation.accepted", "user.banned"} {
		if r := send(clerk(typ, 1000, map[string]any{"id": "x"})); r.Status != http.StatusNoContent {
			t.Errorf("%s: %d %s", typ, r.Status, r.Body)
		}
	}
	var n int64
	e.DB.Model(&orgs.User{}).Count(&n)
	if n != 0 {
		t.Fatalf("ignored events stored %d users", n)
	}
	testenv.ExpectProblem(t, send(clerk("user.created", 1000, map[string]any{"first_name": "no id"})), http.StatusBadRequest)
	testenv.ExpectProblem(t, send(clerk("organizationMembership.created", 1000, map[string]any{"id": "orgmem_1", "role": "org:admin"})), http.StatusBadRequest)
}

// Both webhooks answer 503 when Temporal cannot take the workflow, so the
// provider retries.
func TestWebhooksAnswer503WithoutTemporal(t *testing.T) {
	t.Parallel()
	secret := testenv.WebhookSecret(t)
	env := testenv.New(t, func(d *api.Deps) {
		d.Temporal, d.TaskQueue, d.SvixSecret, d.Billing = unreachableTemporal(t), "expd", secret, eventOnlyBilling()
	})
	identity := testenv.Marshal(t, clerk("user.created", 1000, clerkUser("user_503", "x@example.com", 1000)))
	payment := testenv.Marshal(t, stripeEvent("evt_503", "customer.subscription.updated", time.Now(), subscriptionObject("sub_1", "cus_1", "active", "", nil)))

	t.Run("identity", func(t *testing.T) {
		t.Parallel()
		r := env.Do(t, "POST", identityPath, identity, testenv.SvixHeaders(t, secret, "msg_503", time.Now(), identity)...)
		testenv.ExpectProblem(t, r, http.StatusServiceUnavailable)
		if r.Header.Get("Retry-After") == "" {
			t.Fatal("503 without Retry-After")
		}
	})
	t.Run("payment", func(t *testing.T) {
		t.Parallel()
		r := env.Do(t, "POST", paymentPath, payment, testenv.PaymentHeaders(payment, stripeWebhookSecret, time.Now())...)
		testenv.ExpectProblem(t, r, http.StatusServiceUnavailable)
	})
}
