package orgs_test

import (
	"encoding/json"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/audit"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/plans"
)

func applyPlan(t *testing.T, db *gorm.DB, ch orgs.PlanChange, want orgs.PlanOutcome) {
	t.Helper()
	got, err := orgs.ApplyPlan(ctx, db, ch)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("event %s: outcome %q, want %q", ch.EventID, got, want)
	}
}

func reload(t *testing.T, db *gorm.DB, id string) orgs.Org {
	t.Helper()
	o, err := orgs.Get(ctx, db, id)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func outcomes(t *testing.T, db *gorm.DB) map[string]string {
	t.Helper()
	var rows []struct{ EventID, Outcome string }
	if err := db.Table("payment_events").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r.EventID] = r.Outcome
	}
	return out
}

func TestApplyPlanNewestEventWinsAndAppliesOnce(t *testing.T) {
	db := testenv.DB(t)
	o, err := orgs.Ensure(ctx, db, "org_billed", "billed")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	checkout := orgs.PlanChange{EventID: "evt_1", EventType: "checkout.session.completed", At: t0, OrgID: o.ID,
		CustomerID: "cus_1", SubscriptionID: "sub_1", Status: "active", Plan: plans.Pro}
	upgrade := orgs.PlanChange{EventID: "evt_3", EventType: "customer.subscription.updated", At: t0.Add(2 * time.Second),
		CustomerID: "cus_1", SubscriptionID: "sub_1", Status: "active", Plan: plans.Business}
	lateCreate := orgs.PlanChange{EventID: "evt_2", EventType: "customer.subscription.created", At: t0.Add(time.Second),
		CustomerID: "cus_1", SubscriptionID: "sub_1", Status: "incomplete", Plan: plans.Free}

	applyPlan(t, db, checkout, orgs.PlanApplied)
	applyPlan(t, db, checkout, orgs.PlanDuplicate)
	applyPlan(t, db, upgrade, orgs.PlanApplied) // found by customer: no org id in the event
	applyPlan(t, db, lateCreate, orgs.PlanStale)

	got := reload(t, db, o.ID)
	if got.Plan != "business" || got.SubscriptionStatus != "active" || *got.StripeCustomerID != "cus_1" ||
		*got.StripeSubscriptionID != "sub_1" || !got.PlanEventAt.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("org after events: %+v", got)
	}
	want := map[string]string{"evt_1": "applied", "evt_3": "applied", "evt_2": "stale"}
	if got := outcomes(t, db); len(got) != 3 || got["evt_1"] != want["evt_1"] || got["evt_2"] != want["evt_2"] || got["evt_3"] != want["evt_3"] {
		t.Fatalf("recorded outcomes %v, want %v", got, want)
	}
}

func TestApplyPlanIgnoresOtherSubscriptionsAndUnknownOrgs(t *testing.T) {
	db := testenv.DB(t)
	o, err := orgs.Ensure(ctx, db, "org_two_subs", "two")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	applyPlan(t, db, orgs.PlanChange{EventID: "evt_a", At: t0, OrgID: o.ID, CustomerID: "cus_2", SubscriptionID: "sub_new",
		Status: "active", Plan: plans.Pro}, orgs.PlanApplied)
	// The end of an older subscription must not take the plan of the new one.
	applyPlan(t, db, orgs.PlanChange{EventID: "evt_b", At: t0.Add(time.Minute), CustomerID: "cus_2", SubscriptionID: "sub_old",
		Status: "canceled", Plan: plans.Free, EndsSubscription: true}, orgs.PlanOtherSubscription)
	if got := reload(t, db, o.ID); got.Plan != "pro" {
		t.Fatalf("plan %q after another subscription ended", got.Plan)
	}
	applyPlan(t, db, orgs.PlanChange{EventID: "evt_c", At: t0.Add(2 * time.Minute), CustomerID: "cus_2", SubscriptionID: "sub_new",
		Status: "canceled", Plan: plans.Free, EndsSubscription: true}, orgs.PlanApplied)
	if got := reload(t, db, o.ID); got.Plan != "free" || got.SubscriptionStatus != "canceled" {
		t.Fatalf("org after its subscription ended: %+v", got)
	}

	applyPlan(t, db, orgs.PlanChange{EventID: "evt_d", At: t0, OrgID: "not-a-uuid", CustomerID: "cus_nobody", Status: "active", Plan: plans.Pro}, orgs.PlanUnknownOrg)
	applyPlan(t, db, orgs.PlanChange{EventID: "evt_e", At: t0, Status: "active", Plan: plans.Pro}, orgs.PlanUnknownOrg)
}

// A plan change is in the audit log once, by the system and the workflow
// that applied it; an event that confirms the current state adds nothing.
func TestApplyPlanAuditsAChangeOnce(t *testing.T) {
	db := testenv.DB(t)
	o, err := orgs.Ensure(ctx, db, "org_audited_plan", "audited-plan")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	up := orgs.PlanChange{EventID: "evt_up", EventType: "checkout.session.completed", At: t0, OrgID: o.ID,
		CustomerID: "cus_a", SubscriptionID: "sub_a", Status: "active", Plan: plans.Pro, WorkflowID: "stripe/evt_up"}
	applyPlan(t, db, up, orgs.PlanApplied)
	applyPlan(t, db, up, orgs.PlanDuplicate)
	same := up
	same.EventID, same.EventType, same.At, same.WorkflowID = "evt_same", "customer.subscription.updated", t0.Add(time.Second), "stripe/evt_same"
	applyPlan(t, db, same, orgs.PlanApplied)
	page, err := audit.List(ctx, db, o.ID, audit.Query{Action: audit.PlanChanged, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Entries) != 1 {
		t.Fatalf("plan entries %+v, want one", page.Entries)
	}
	e := page.Entries[0]
	var before, after map[string]string
	if err := json.Unmarshal(e.Before, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(e.After, &after); err != nil {
		t.Fatal(err)
	}
	if e.Actor != audit.SystemActor || e.WorkflowID != "stripe/evt_up" || len(before) != 1 || before["plan"] != "free" ||
		after["plan"] != "pro" || after["subscription_status"] != "active" {
		t.Fatalf("plan entry %+v (before %s, after %s)", e, e.Before, e.After)
	}
}
