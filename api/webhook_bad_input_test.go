package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/expd/expd/api"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/workflows"
)

// A signed identity event that no store could apply (a NUL in an id or a
// name, a control character in an id) is a 400 problem before anything is
// queued: it would otherwise be acknowledged and then fail in its
// workflow for good.
func TestIdentityWebhookRefusesUnstorableTextBeforeAcknowledging(t *testing.T) {
	t.Parallel()
	e := newWebhookEnv(t, nil)
	for name, event := range map[string]map[string]any{
		"NUL in a user id":          clerk("user.created", 1000, clerkUser("user_\x00nul", "a@example.com", 1000)),
		"NUL in a user's name":      clerk("user.created", 1000, map[string]any{"id": "user_name_nul", "first_name": "A\x00da", "updated_at": 1000}),
		"NUL in an email":           clerk("user.updated", 1000, clerkUser("user_email_nul", "a\x00@example.com", 1000)),
		"NUL in an org id":          clerk("organization.created", 1000, clerkOrg("org_\x00nul", "Org", 1000)),
		"NUL in an org name":        clerk("organization.updated", 1000, clerkOrg("org_name_nul", "Acme\x00", 1000)),
		"control in an org id":      clerk("organization.created", 1000, clerkOrg("org_\x01ctl", "Org", 1000)),
		"NUL in a membership's org": clerk("organizationMembership.created", 1000, clerkMembership("orgmem_nul", "org_\x00m", "user_m", "org:admin", 1000)),
		"NUL in a membership id":    clerk("organizationMembership.created", 1000, clerkMembership("orgmem_\x00", "org_m", "user_m", "org:admin", 1000)),
		"NUL in a role":             clerk("organizationMembership.updated", 1000, clerkMembership("orgmem_role", "org_m", "user_m", "org:\x00admin", 1000)),
		"NUL in a deleted user id":  clerk("user.deleted", 1000, clerkDeleted("user", "user_\x00gone")),
	} {
		t.Run(name, func(t *testing.T) {
			id := fmt.Sprintf("msg_%s_%d", e.Temporal.TaskQueue, svixSeq.Add(1))
			body := testenv.Marshal(t, event)
			p := testenv.ExpectProblem(t, e.Do(t, "POST", identityPath, body, testenv.SvixHeaders(t, e.SvixSecret, id, time.Now(), body)...), http.StatusBadRequest)
			if p.Code != api.CodeMalformedEvent {
				t.Errorf("code %q, want %s", p.Code, api.CodeMalformedEvent)
			}
			if _, err := e.Temporal.Client.DescribeWorkflowExecution(t.Context(), workflows.IdentitySyncID(id), ""); err == nil {
				t.Errorf("a workflow was started for the refused delivery")
			}
		})
	}
	var n int64
	e.DB.Model(&orgs.User{}).Count(&n)
	if n != 0 {
		t.Fatalf("refused deliveries stored %d users", n)
	}
}

// A membership event that reuses a membership id for another org or user
// can never be applied: its workflow fails at once with a non-retryable
// error instead of retrying for most of an hour. The same id for the same
// pair is an ordinary update.
func TestIdentityWebhookMembershipIDReusedFailsAtOnce(t *testing.T) {
	t.Parallel()
	e := newWebhookEnv(t, nil)
	if !e.deliver(t, clerk("organizationMembership.created", 1000, clerkMembership("orgmem_reused", "org_a", "user_a", "org:member", 1000))) {
		t.Fatal("first membership not applied")
	}
	for _, c := range []struct {
		name, org, user string
		fails           bool
	}{
		{"another org", "org_b", "user_a", true},
		{"another user", "org_a", "user_b", true},
		{"another org and user", "org_b", "user_b", true},
		{"the same pair", "org_a", "user_a", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := fmt.Sprintf("msg_%s_%d", e.Temporal.TaskQueue, svixSeq.Add(1))
			body := testenv.Marshal(t, clerk("organizationMembership.updated", 2000, clerkMembership("orgmem_reused", c.org, c.user, "org:admin", 2000)))
			if r := e.Do(t, "POST", identityPath, body, testenv.SvixHeaders(t, e.SvixSecret, id, time.Now(), body)...); r.Status != http.StatusNoContent {
				t.Fatalf("delivery: %d %s", r.Status, r.Body)
			}
			// A retrying failure would outlive this deadline by far
			// (50 attempts, up to a minute apart).
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			var res workflows.IdentitySyncResult
			err := e.Temporal.Client.GetWorkflow(ctx, workflows.IdentitySyncID(id), "").Get(ctx, &res)
			if !c.fails {
				if err != nil || !res.Applied {
					t.Fatalf("same pair: applied %v, %v", res.Applied, err)
				}
				return
			}
			var app *temporal.ApplicationError
			if !errors.As(err, &app) || !app.NonRetryable() || app.Type() != "invalid_identity_change" || !strings.Contains(app.Error(), "another org or user") {
				t.Fatalf("workflow error %v, want a non-retryable invalid_identity_change", err)
			}
		})
	}
	var m orgs.Membership
	if err := e.DB.Where("clerk_membership_id = ?", "orgmem_reused").Take(&m).Error; err != nil || m.Role != "org:admin" {
		t.Fatalf("membership %+v, %v: want the same pair's update applied", m, err)
	}
	o, err := orgs.Ensure(t.Context(), e.DB, "org_a", "")
	if err != nil || o.ID != m.OrgID {
		t.Fatalf("membership moved to org %s (org_a is %s, %v)", m.OrgID, o.ID, err)
	}
}

// Correctly signed payment events that could never be applied are a 4xx
// problem, not a 503 the provider retries: a body that is not JSON, no id
// (two events without one would share a workflow id and the second would
// be dropped), an id with control characters or longer than any event id,
// a created time out of range, a control character in an id it carries.
// Nothing is queued for any of them; the longest id accepted is applied.
func TestPaymentWebhookRefusesSignedEventsThatCannotBeApplied(t *testing.T) {
	t.Parallel()
	bc, _ := stripeMockBilling(t)
	e := newWebhookEnv(t, bc)
	org := e.NewOrg(t)
	now := time.Now()
	event := func(id string, created int64) []byte {
		ev := stripeEvent(id, "checkout.session.completed", now, checkoutObject(org.ID, "cus_bad", "", "pro"))
		ev["created"] = created
		return testenv.Marshal(t, ev)
	}
	noID := testenv.Marshal(t, map[string]any{"object": "event", "type": "checkout.session.completed", "created": now.Unix(),
		"data": map[string]any{"object": checkoutObject(org.ID, "cus_bad", "", "pro")}})
	badOrg := testenv.Marshal(t, stripeEvent("evt_bad_org", "checkout.session.completed", now, checkoutObject(org.ID+"\x00", "cus_bad", "", "pro")))
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"not JSON", []byte("this is not json")},
		{"JSON but not an object", []byte(`["evt_1"]`)},
		{"id of the wrong type", []byte(`{"id": 5, "type": "checkout.session.completed", "created": 1}`)},
		{"no id", noID},
		{"no id, other type", testenv.Marshal(t, map[string]any{"type": "invoice.paid", "created": now.Unix()})},
		{"NUL in the id", event("evt_\x00nul", now.Unix())},
		{"newline in the id", event("evt_\nnl", now.Unix())},
		{"id over 1,000 characters", event("evt_"+strings.Repeat("x", 1001), now.Unix())},
		{"id just over the limit", event("evt_"+strings.Repeat("x", 252), now.Unix())},
		{"created zero", event("evt_created_0", 0)},
		{"created negative", event("evt_created_neg", -1)},
		{"created in year 300000", event("evt_created_far", 9_000_000_000_000)},
		{"created beyond int64", []byte(`{"id": "evt_created_huge", "type": "checkout.session.completed", "created": 1e30}`)},
		{"NUL in the org id", badOrg},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := testenv.ExpectProblem(t, e.Do(t, "POST", paymentPath, c.body, testenv.PaymentHeaders(c.body, stripeWebhookSecret, now)...), http.StatusBadRequest)
			if p.Code != api.CodeMalformedEvent {
				t.Errorf("code %q, want %s (%s)", p.Code, api.CodeMalformedEvent, p.Detail)
			}
		})
	}
	if n := e.paymentEvents(t); n != 0 {
		t.Fatalf("%d payment events recorded from refused deliveries", n)
	}
	longest := "evt_" + strings.Repeat("x", 251) // 255 bytes
	if res := e.pay(t, stripeEvent(longest, "checkout.session.completed", now, checkoutObject(org.ID, "cus_ok", "", "pro"))); res.Outcome != orgs.PlanApplied {
		t.Fatalf("longest id: %+v", res)
	}
}
