package orgs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/expd/expd/audit"
	"github.com/expd/expd/database"
	"github.com/expd/expd/plans"
)

// PlanChange is the plan an org gets from one payment-provider event.
type PlanChange struct {
	EventID        string
	EventType      string
	At             time.Time // the event's creation time: older events never override newer ones
	OrgID          string    // expd's org id; empty or unknown: found by CustomerID
	CustomerID     string
	SubscriptionID string
	Status         string // the subscription's status
	Plan           plans.Name
	// EndsSubscription marks a deleted subscription: it changes nothing
	// when the org has moved on to another subscription.
	EndsSubscription bool
	// WorkflowID is the workflow that applies the event (the audit entry's
	// actor is the system, acting for the payment provider).
	WorkflowID string
}

// PlanOutcome tells what ApplyPlan did.
type PlanOutcome string

const (
	PlanApplied           PlanOutcome = "applied"
	PlanStale             PlanOutcome = "stale"              // an event at least as new was applied before
	PlanDuplicate         PlanOutcome = "duplicate"          // this event was processed before
	PlanUnknownOrg        PlanOutcome = "unknown_org"        // no live org has this id or customer
	PlanOtherSubscription PlanOutcome = "other_subscription" // the ended subscription is not the org's
)

type paymentEvent struct {
	EventID      string `gorm:"primaryKey"`
	Type         string
	OrgID        *string
	EventCreated time.Time
	Outcome      PlanOutcome
	ProcessedAt  time.Time
}

func (paymentEvent) TableName() string { return "payment_events" }

// ApplyPlan sets the org's plan and subscription from ch, at most once
// per event and never from an event older than the last one applied. It
// records the event and its outcome in the same transaction.
func ApplyPlan(ctx context.Context, db *gorm.DB, ch PlanChange) (PlanOutcome, error) {
	var outcome PlanOutcome
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		rec := paymentEvent{EventID: ch.EventID, Type: ch.EventType, EventCreated: ch.At.UTC(), Outcome: "pending", ProcessedAt: time.Now().UTC()}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&rec)
		if res.Error != nil {
			return fmt.Errorf("record payment event: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			outcome = PlanDuplicate
			return nil
		}
		org, found, err := billedOrg(tx, ch)
		if err != nil {
			return err
		}
		if outcome = decide(org, found, ch); outcome == PlanApplied {
			if err := setPlan(tx, org.ID, ch); err != nil {
				return err
			}
			if err := auditPlan(ctx, tx, org, ch); err != nil {
				return err
			}
		}
		var orgID *string
		if found {
			orgID = &org.ID
		}
		return wrap("record outcome", tx.Model(&rec).Updates(map[string]any{"outcome": outcome, "org_id": orgID}).Error)
	})
	if err != nil {
		return "", fmt.Errorf("apply plan from event %s: %w", ch.EventID, err)
	}
	return outcome, nil
}

func decide(org Org, found bool, ch PlanChange) PlanOutcome {
	switch {
	case !found:
		return PlanUnknownOrg
	case ch.EndsSubscription && org.StripeSubscriptionID != nil && *org.StripeSubscriptionID != ch.SubscriptionID:
		return PlanOtherSubscription
	case org.PlanEventAt != nil && ch.At.Before(*org.PlanEventAt):
		return PlanStale
	}
	return PlanApplied
}

// planState is the audit summary of an org's plan.
type planState struct {
	Plan               string `json:"plan"`
	SubscriptionStatus string `json:"subscription_status,omitempty"`
}

// auditPlan records plan.changed when the event changes the org's plan or
// subscription status (an event that confirms the current state records
// nothing). The payment event id dedups it.
func auditPlan(ctx context.Context, tx *gorm.DB, org Org, ch PlanChange) error {
	before := planState{Plan: string(org.Plan), SubscriptionStatus: org.SubscriptionStatus}
	after := planState{Plan: string(ch.Plan), SubscriptionStatus: ch.Status}
	if before == after {
		return nil
	}
	return audit.Record(ctx, tx, audit.Entry{OrgID: org.ID, Action: audit.PlanChanged, Actor: audit.SystemActor, WorkflowID: ch.WorkflowID,
		Summary: fmt.Sprintf("plan %s -> %s (subscription %s, payment event %s %s)", before.Plan, after.Plan, orNone(ch.Status), ch.EventType, ch.EventID),
		Before:  before, After: after, DedupKey: "plan/" + ch.EventID})
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func setPlan(tx *gorm.DB, orgID string, ch PlanChange) error {
	set := map[string]any{
		"plan": string(ch.Plan), "subscription_status": ch.Status, "plan_event_at": ch.At.UTC(), "updated_at": time.Now().UTC(),
	}
	if ch.SubscriptionID != "" {
		set["stripe_subscription_id"] = ch.SubscriptionID
	}
	if ch.CustomerID != "" {
		set["stripe_customer_id"] = ch.CustomerID
	}
	return wrap("set plan", tx.Model(&Org{}).Where("id = ?", orgID).Updates(set).Error)
}

// billedOrg finds the live org an event is for (by the org id the
// checkout set, else by customer), locked for the update.
func billedOrg(tx *gorm.DB, ch PlanChange) (Org, bool, error) {
	q := tx.Where("deleted_at IS NULL")
	if database.IsPostgres(tx) {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	if uuid.Validate(ch.OrgID) == nil {
		if org, found, err := takeOrg(q.Session(&gorm.Session{}), "id = ?", ch.OrgID); found || err != nil {
			return org, found, err
		}
	}
	if ch.CustomerID != "" {
		return takeOrg(q.Session(&gorm.Session{}), "stripe_customer_id = ?", ch.CustomerID)
	}
	return Org{}, false, nil
}

func takeOrg(q *gorm.DB, where, arg string) (Org, bool, error) {
	var org Org
	err := q.Where(where, arg).Take(&org).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return org, false, nil
	}
	return org, err == nil, wrap("find billed org", err)
}

// SetPlan puts the org on plan by hand, outside the payment flow, and
// records the change in the audit log: `expd dev --plan` lifts the dev
// org's limits for local load this way. The same plan again is no change.
func SetPlan(ctx context.Context, db *gorm.DB, orgID string, plan plans.Name) error {
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var org Org
		if err := tx.Where("id = ?", orgID).Take(&org).Error; err != nil {
			return err
		}
		if plans.Name(org.Plan) == plan {
			return nil
		}
		if err := tx.Model(&Org{}).Where("id = ?", orgID).Update("plan", plan).Error; err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{OrgID: orgID, Action: audit.PlanChanged, Actor: audit.SystemActor,
			Summary: fmt.Sprintf("plan %s -> %s (set by hand: expd dev --plan)", org.Plan, plan),
			Before:  planState{Plan: string(org.Plan)}, After: planState{Plan: string(plan)}})
	})
	if err != nil {
		return fmt.Errorf("set org %s on plan %s: %w", orgID, plan, err)
	}
	return nil
}
