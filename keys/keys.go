// Package keys owns the api_keys and key_audit tables: it looks live keys
// up by hash, swaps in a new key of a scope and revokes the previous one in
// one transaction with an audit entry, and tells every API instance's
// cache that the org's keys changed. It only
// ever sees key hashes (and the publishable key, which is not a secret), so
// the callers that run it inside a Temporal workflow never put a secret in
// the workflow's history.
package keys

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	orgaudit "github.com/expd/expd/audit"
	"github.com/expd/expd/auth"
	"github.com/expd/expd/sdkcache"
)

// live narrows a query to keys not revoked: the one place the rule is written.
func live(db *gorm.DB) *gorm.DB { return db.Where("revoked_at IS NULL") }

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

// Store makes the key the org's only live key of its scope, and tells
// every API instance (PostgreSQL NOTIFY, sent on commit) to forget the
// org's cached keys. It is idempotent: storing the same hash again changes
// nothing and returns the original result, so a retried activity is
// harmless.
func Store(ctx context.Context, db *gorm.DB, in StoreInput) (StoreResult, error) {
	var res StoreResult
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var existing APIKey
		err := tx.Where("key_hash = ?", in.Hash).Take(&existing).Error
		if err == nil {
			if existing.OrgID != in.OrgID || existing.Scope != string(in.Scope) {
				return fmt.Errorf("key hash already belongs to another org or scope")
			}
			res = StoreResult{KeyID: existing.ID, CreatedAt: existing.CreatedAt}
			return sdkcache.NotifyKeysChanged(ctx, tx, in.OrgID)
		}
		if !errors.Is(err, gorm.ErrRecordNotFound) {
			return fmt.Errorf("find key: %w", err)
		}
		now := time.Now().UTC()
		var current []APIKey
		if err := live(tx).Where("org_id = ? AND scope = ?", in.OrgID, in.Scope).Find(&current).Error; err != nil {
			return fmt.Errorf("find live keys: %w", err)
		}
		for _, k := range current {
			// Revoking also drops the stored publishable plaintext: only the
			// live key can be read again.
			if err := tx.Model(&APIKey{}).Where("id = ?", k.ID).
				Updates(map[string]any{"revoked_at": now, "publishable": nil}).Error; err != nil {
				return fmt.Errorf("revoke key: %w", err)
			}
			if err := audit(tx, in, k.ID, "revoked", now); err != nil {
				return err
			}
			res.RevokedIDs = append(res.RevokedIDs, k.ID)
		}
		key := APIKey{ID: uuid.NewString(), OrgID: in.OrgID, Scope: string(in.Scope), KeyHash: in.Hash, Prefix: in.Prefix, CreatedAt: now}
		if in.Scope == auth.Publishable && in.Publishable != "" {
			key.Publishable = &in.Publishable
		}
		if err := tx.Create(&key).Error; err != nil {
			return fmt.Errorf("insert key: %w", err)
		}
		res.KeyID, res.CreatedAt = key.ID, now
		if err := audit(tx, in, key.ID, "issued", now); err != nil {
			return err
		}
		if err := auditLog(ctx, tx, in, key, res.RevokedIDs); err != nil {
			return err
		}
		return sdkcache.NotifyKeysChanged(ctx, tx, in.OrgID)
	})
	return res, err
}

func audit(tx *gorm.DB, in StoreInput, keyID, action string, at time.Time) error {
	row := KeyAudit{ID: uuid.NewString(), OrgID: in.OrgID, Scope: string(in.Scope), Action: action, KeyID: keyID, Actor: in.Actor, CreatedAt: at}
	if err := tx.Create(&row).Error; err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	return nil
}

// keyState is the audit summary of a key (never its hash).
type keyState struct {
	Scope  string   `json:"scope"`
	KeyID  string   `json:"key_id,omitempty"`
	Prefix string   `json:"prefix,omitempty"`
	KeyIDs []string `json:"key_ids,omitempty"`
}

// auditLog records key.rotated in the org's audit log (beside key_audit,
// which keeps one row per key): which key is live now and which were
// revoked. The actor is the admin, or the system when none is named.
func auditLog(ctx context.Context, tx *gorm.DB, in StoreInput, key APIKey, revoked []string) error {
	actor := in.Actor
	if actor == "" {
		actor = orgaudit.SystemActor
	}
	summary := fmt.Sprintf("%s key %s… issued", in.Scope, in.Prefix)
	if len(revoked) > 0 {
		summary = fmt.Sprintf("%s key rotated to %s…, %d revoked", in.Scope, in.Prefix, len(revoked))
	}
	var before any
	if len(revoked) > 0 {
		before = keyState{Scope: string(in.Scope), KeyIDs: revoked}
	}
	return orgaudit.Record(ctx, tx, orgaudit.Entry{OrgID: in.OrgID, Action: orgaudit.KeyRotated, Actor: actor, Summary: summary,
		Before: before, After: keyState{Scope: string(in.Scope), KeyID: key.ID, Prefix: in.Prefix}, At: key.CreatedAt})
}

// Issue generates a key of the scope and stores it as the org's live one
// (Store; a publishable key's plaintext kept for re-reading), returning the
// plaintext. It is for callers outside workflows that mint keys directly:
// the dev credentials, test and bench set-ups. Rotations from the API go
// through the key-rotation workflow, which only ever sees the hash.
func Issue(ctx context.Context, db *gorm.DB, orgID string, scope auth.Scope, actor string) (string, error) {
	k, err := auth.GenerateKey(scope)
	if err != nil {
		return "", fmt.Errorf("generate %s key: %w", scope, err)
	}
	in := StoreInput{OrgID: orgID, Scope: scope, Hash: k.Hash, Prefix: k.Prefix, Actor: actor}
	if scope == auth.Publishable {
		in.Publishable = k.Plain
	}
	if _, err := Store(ctx, db, in); err != nil {
		return "", fmt.Errorf("issue %s key: %w", scope, err)
	}
	return k.Plain, nil
}

// Publishable returns the org's live publishable key, or "" when none.
func Publishable(ctx context.Context, db *gorm.DB, orgID string) (string, time.Time, error) {
	var k APIKey
	err := live(db.WithContext(ctx)).Where("org_id = ? AND scope = ?", orgID, auth.Publishable).Limit(1).Find(&k).Error
	if err != nil {
		return "", time.Time{}, fmt.Errorf("read publishable key: %w", err)
	}
	if k.Publishable == nil {
		return "", time.Time{}, nil
	}
	return *k.Publishable, k.CreatedAt, nil
}

// OrgOfKey returns the org of a live key, or "" when the key is unknown or
// revoked. The lookup goes by hash through a unique index; the hashes are
// then compared in constant time so timing tells nothing about near misses.
func OrgOfKey(ctx context.Context, db *gorm.DB, plain string) (string, error) {
	hash := auth.HashKey(plain)
	var k APIKey
	err := live(db.WithContext(ctx)).Select("org_id", "key_hash").Where("key_hash = ?", hash).Limit(1).Find(&k).Error
	if err != nil {
		return "", fmt.Errorf("look up key: %w", err)
	}
	if k.KeyHash == "" || subtle.ConstantTimeCompare([]byte(k.KeyHash), []byte(hash)) != 1 {
		return "", nil
	}
	return k.OrgID, nil
}

// IsLive tells whether plain is a live key of the org.
func IsLive(ctx context.Context, db *gorm.DB, orgID, plain string) (bool, error) {
	if plain == "" {
		return false, nil
	}
	var n int64
	err := live(db.WithContext(ctx)).Model(&APIKey{}).Where("org_id = ? AND key_hash = ?", orgID, auth.HashKey(plain)).Count(&n).Error
	if err != nil {
		return false, fmt.Errorf("check key: %w", err)
	}
	return n == 1, nil
}

// KeepPublishable stores the plaintext of a live publishable key so that
// an admin can read it again (Publishable). The API writes it after the
// rotation workflow, so that no plaintext key enters workflow history.
func KeepPublishable(ctx context.Context, db *gorm.DB, key auth.NewKey) error {
	err := live(db.WithContext(ctx)).Model(&APIKey{}).Where("key_hash = ?", key.Hash).Update("publishable", key.Plain).Error
	if err != nil {
		return fmt.Errorf("store publishable key %s: %w", key.Prefix, err)
	}
	return nil
}
