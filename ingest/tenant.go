package ingest

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/plans"
)

// Tenant is what the write path needs to know about an org.
type Tenant struct {
	OrgID         string
	Plan          plans.Name
	ConfigVersion int64
}

// Allowance is the org's monthly event allowance (plans.Unlimited: none).
func (t Tenant) Allowance() int64 { return plans.Get(t.Plan).MonthlyEventAllowance }

// Retention is how far back the plan keeps events, the window of imports.
func (t Tenant) Retention() time.Duration {
	return time.Duration(plans.Get(t.Plan).RetentionDays) * 24 * time.Hour
}

// LoadTenant reads the org's plan and config_version in one query.
func LoadTenant(ctx context.Context, db *gorm.DB, orgID string) (Tenant, error) {
	var row struct {
		Plan          string
		ConfigVersion int64
	}
	err := db.WithContext(ctx).Table("orgs").Select("plan", "config_version").Where("id = ?", orgID).Take(&row).Error
	if err != nil {
		return Tenant{}, fmt.Errorf("load org %s: %w", orgID, err)
	}
	return Tenant{OrgID: orgID, Plan: plans.Name(row.Plan), ConfigVersion: row.ConfigVersion}, nil
}
