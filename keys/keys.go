// Package keys stores org API keys: it swaps in a new key of a scope and
// revokes the previous one in one transaction, with an audit entry. It only
// ever sees key hashes (and the publishable key, which is not a secret), so
// the callers that run it inside a Temporal workflow never put a secret in
// the workflow's history.
package keys

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/models"
)

// StoreInput names the new key by its hash.
type StoreInput struct {
	OrgID       string
	Scope       auth.Scope
	Hash        string
	Prefix      string
	Publishable string // the plaintext, only for publishable keys
	Actor       string
}

// StoreResult tells what the swap did.
type StoreResult struct {
	KeyID      string
	CreatedAt  time.Time
	RevokedIDs []string
}

// Store makes the key the org's only live key of its scope. It is
// idempotent: storing the same hash again changes nothing and returns the
// original result, so a retried activity is harmless.
func Store(ctx context.Context, db *gorm.DB, in StoreInput) (StoreResult, error) {
	var res StoreResult
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var existing models.APIKey
		err := tx.Where("key_hash = ?", in.Hash).Take(&existing).Error
		if err == nil {
			if existing.OrgID != in.OrgID || existing.Scope != string(in.Scope) {
				return fmt.Errorf("key hash already belongs to another org or scope")
			}
			res = StoreResult{KeyID: existing.ID, CreatedAt: existing.CreatedAt}
			return nil
		}
		if !errors.Is(err, gorm.ErrRecordNotFound) {
			return fmt.Errorf("find key: %w", err)
		}
		now := time.Now().UTC()
		var live []models.APIKey
		if err := tx.Where("org_id = ? AND scope = ? AND revoked_at IS NULL", in.OrgID, in.Scope).Find(&live).Error; err != nil {
			return fmt.Errorf("find live keys: %w", err)
		}
		for _, k := range live {
			// Revoking also drops the stored publishable plaintext: only the
			// live key can be read again.
			if err := tx.Model(&models.APIKey{}).Where("id = ?", k.ID).
				Updates(map[string]any{"revoked_at": now, "publishable": nil}).Error; err != nil {
				return fmt.Errorf("revoke key: %w", err)
			}
			if err := audit(tx, in, k.ID, "revoked", now); err != nil {
				return err
			}
			res.RevokedIDs = append(res.RevokedIDs, k.ID)
		}
		key := models.APIKey{ID: uuid.NewString(), OrgID: in.OrgID, Scope: string(in.Scope), KeyHash: in.Hash, Prefix: in.Prefix, CreatedAt: now}
		if in.Scope == auth.Publishable && in.Publishable != "" {
			key.Publishable = &in.Publishable
		}
		if err := tx.Create(&key).Error; err != nil {
			return fmt.Errorf("insert key: %w", err)
		}
		res.KeyID, res.CreatedAt = key.ID, now
		return audit(tx, in, key.ID, "issued", now)
	})
	return res, err
}

func audit(tx *gorm.DB, in StoreInput, keyID, action string, at time.Time) error {
	row := models.KeyAudit{ID: uuid.NewString(), OrgID: in.OrgID, Scope: string(in.Scope), Action: action, KeyID: keyID, Actor: in.Actor, CreatedAt: at}
	if err := tx.Create(&row).Error; err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	return nil
}

// Publishable returns the org's live publishable key, or "" when none.
func Publishable(ctx context.Context, db *gorm.DB, orgID string) (string, time.Time, error) {
	var k models.APIKey
	err := db.WithContext(ctx).Where("org_id = ? AND scope = ? AND revoked_at IS NULL", orgID, auth.Publishable).Limit(1).Find(&k).Error
	if err != nil {
		return "", time.Time{}, fmt.Errorf("read publishable key: %w", err)
	}
	if k.Publishable == nil {
		return "", time.Time{}, nil
	}
	return *k.Publishable, k.CreatedAt, nil
}
