package usecases

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/privacy"
)

func (s Service) privacy() privacy.Store { return privacy.Store{DB: s.DB, Secrets: s.Secrets} }

// Privacy returns the org's privacy settings and its plan's retention
// (the bound of retention_days).
func (s Service) Privacy(ctx context.Context, orgID string) (privacy.Settings, int, error) {
	snap, err := s.SDK.Configs.Get(ctx, orgID)
	if err != nil {
		return privacy.Settings{}, 0, fmt.Errorf("read privacy: %w", err)
	}
	set, err := s.privacy().Get(ctx, orgID)
	return set, plans.Get(snap.Plan).RetentionDays, err
}

// SetPrivacy replaces the org's privacy settings (PUT /v1/privacy and the
// dashboard's privacy page): checked against the plan, audited, and
// raising the org's config_version in the same transaction, so every
// instance's cached policy is rebuilt (at once on this one, within the
// cache's max age elsewhere) and applied to the next events stored.
func (s Service) SetPrivacy(ctx context.Context, orgID, actor string, in privacy.Settings) (privacy.Settings, int, error) {
	snap, err := s.SDK.Configs.Get(ctx, orgID)
	if err != nil {
		return privacy.Settings{}, 0, fmt.Errorf("set privacy: %w", err)
	}
	planDays := plans.Get(snap.Plan).RetentionDays
	in.UpdatedAt, in.UpdatedBy = nil, ""
	out, err := s.privacy().Put(ctx, orgID, actor, in, planDays, func(tx *gorm.DB) error {
		_, err := experiments.BumpConfigVersion(tx, orgID)
		return err
	})
	if err != nil {
		return privacy.Settings{}, planDays, err
	}
	s.SDK.Configs.Expire(orgID)
	return out, planDays, nil
}
