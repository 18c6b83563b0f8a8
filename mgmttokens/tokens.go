// Package mgmttokens stores org management tokens (expd_mt_...): credentials
// that scripts and CI present on the dashboard routes instead of an
// identity session. A token has a name, a role (admin or member), an
// optional expiry and a last-used time; only its SHA-256 hash is stored,
// and every issue and revocation is written to the credential audit trail
// and the org's audit log (with refused uses of revoked or expired tokens).
// The package owns the management_tokens table.
package mgmttokens

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	orgaudit "github.com/expd/expd/audit"
	"github.com/expd/expd/auth"
	"github.com/expd/expd/keys"
	"github.com/expd/expd/validate"
)

// Roles of a token; they grant what the identity provider's org:admin and
// org:member roles grant.
const (
	RoleAdmin  = "admin"
	RoleMember = "member"
)

// MaxNameLen bounds a token's name.
const MaxNameLen = 100

// lastUsedResolution is how stale last_used_at may get: a token used many
// times a second costs one write a minute, not one per request.
const lastUsedResolution = time.Minute

// auditScope names management tokens in the credential audit trail.
const auditScope = "management_token"

var (
	// ErrNotFound: no token with this id in the org.
	ErrNotFound = errors.New("management token not found")
	// ErrInvalid: unknown, revoked or expired token, or its org is deleted.
	ErrInvalid = errors.New("invalid management token")
)

// CreateInput describes a token to issue.
type CreateInput struct {
	OrgID     string
	Name      string
	Role      string
	ExpiresAt *time.Time
	Actor     string // who issues it, for the audit trail
}

// Validate reports every bad field at once.
func (in CreateInput) Validate(now time.Time) error {
	var errs validate.Errors
	errs.Text("name", in.Name, MaxNameLen, true)
	if in.Role != RoleAdmin && in.Role != RoleMember {
		errs.Add("role", "must be %q or %q", RoleAdmin, RoleMember)
	}
	if in.ExpiresAt != nil && !in.ExpiresAt.After(now) {
		errs.Add("expires_at", "must be in the future")
	}
	return errs.Err()
}

// Create issues a token. The plaintext is returned once and never stored.
func Create(ctx context.Context, db *gorm.DB, in CreateInput) (Token, string, error) {
	now := time.Now().UTC()
	if err := in.Validate(now); err != nil {
		return Token{}, "", err
	}
	key, err := auth.GenerateManagementToken()
	if err != nil {
		return Token{}, "", err
	}
	tok := Token{ID: uuid.NewString(), OrgID: in.OrgID, Name: in.Name, Role: in.Role,
		TokenHash: key.Hash, Prefix: key.Prefix, CreatedBy: in.Actor, CreatedAt: now}
	if in.ExpiresAt != nil {
		exp := in.ExpiresAt.UTC()
		tok.ExpiresAt = &exp
	}
	err = db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&tok).Error; err != nil {
			return fmt.Errorf("insert management token: %w", err)
		}
		if err := audit(tx, tok, "issued", in.Actor, now); err != nil {
			return err
		}
		return orgaudit.Record(ctx, tx, orgaudit.Entry{OrgID: tok.OrgID, Action: orgaudit.ManagementTokenCreated, Actor: actorOr(in.Actor),
			Summary: fmt.Sprintf("management token %q (%s, %s…) created", tok.Name, tok.Role, tok.Prefix), After: stateOf(tok), At: now})
	})
	if err != nil {
		return Token{}, "", err
	}
	return tok, key.Plain, nil
}

// List returns the org's tokens, newest first, revoked ones included.
func List(ctx context.Context, db *gorm.DB, orgID string) ([]Token, error) {
	list := []Token{}
	err := db.WithContext(ctx).Where("org_id = ?", orgID).Order("created_at DESC, id").Find(&list).Error
	if err != nil {
		return nil, fmt.Errorf("list management tokens: %w", err)
	}
	return list, nil
}

// Revoke ends a token at once. Revoking a revoked token changes nothing.
func Revoke(ctx context.Context, db *gorm.DB, orgID, id, actor string) error {
	if uuid.Validate(id) != nil {
		return ErrNotFound
	}
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var tok Token
		err := tx.Where("id = ? AND org_id = ?", id, orgID).Take(&tok).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("find management token: %w", err)
		}
		if tok.RevokedAt != nil {
			return nil
		}
		now := time.Now().UTC()
		res := tx.Model(&Token{}).Where("id = ? AND revoked_at IS NULL", id).Update("revoked_at", now)
		if res.Error != nil {
			return fmt.Errorf("revoke management token: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return nil // revoked concurrently; that revocation was audited
		}
		if err := audit(tx, tok, "revoked", actor, now); err != nil {
			return err
		}
		before := stateOf(tok)
		tok.RevokedAt = &now
		return orgaudit.Record(ctx, tx, orgaudit.Entry{OrgID: tok.OrgID, Action: orgaudit.ManagementTokenRevoked, Actor: actorOr(actor),
			Summary: fmt.Sprintf("management token %q (%s…) revoked", tok.Name, tok.Prefix), Before: before, After: stateOf(tok), At: now})
	})
}

// Authenticate returns the live token whose plaintext is plain, and
// refreshes its last-used time. The lookup goes by hash through a unique
// index; the found hash is compared in constant time.
func Authenticate(ctx context.Context, db *gorm.DB, plain string) (Token, error) {
	var tok Token
	if !auth.IsManagementToken(plain) {
		return tok, ErrInvalid
	}
	hash := auth.HashKey(plain)
	err := db.WithContext(ctx).Table("management_tokens t").Select("t.*").
		Joins("JOIN orgs o ON o.id = t.org_id AND o.deleted_at IS NULL").
		Where("t.token_hash = ?", hash).Limit(1).Find(&tok).Error
	if err != nil {
		return tok, fmt.Errorf("find management token: %w", err)
	}
	now := time.Now().UTC()
	if tok.ID == "" || subtle.ConstantTimeCompare([]byte(tok.TokenHash), []byte(hash)) != 1 {
		return Token{}, ErrInvalid
	}
	if state := tok.State(now); state != TokenLive {
		// The token is genuine but no longer valid: its org is told.
		auditRefused(ctx, db, tok, state, now)
		return Token{}, ErrInvalid
	}
	if tok.LastUsedAt == nil || now.Sub(*tok.LastUsedAt) >= lastUsedResolution {
		err := db.WithContext(ctx).Model(&Token{}).Where("id = ?", tok.ID).Update("last_used_at", now).Error
		if err != nil {
			return tok, fmt.Errorf("record management token use: %w", err)
		}
		tok.LastUsedAt = &now
	}
	return tok, nil
}

// Session is what a token speaks for on the dashboard routes: its role
// maps to the identity provider's org role, and its actor name says which
// token acted in audit entries and created_by fields.
func Session(tok Token) auth.Session {
	role := "org:" + tok.Role
	return auth.Session{UserID: Actor(tok), Role: role}
}

// Actor names a token wherever an actor is recorded.
func Actor(tok Token) string { return "management_token:" + tok.ID }

// tokenState is the audit log's summary of a token: never its hash.
type tokenState struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Role      string     `json:"role"`
	Prefix    string     `json:"prefix"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

func stateOf(tok Token) tokenState {
	return tokenState{ID: tok.ID, Name: tok.Name, Role: tok.Role, Prefix: tok.Prefix, ExpiresAt: tok.ExpiresAt, RevokedAt: tok.RevokedAt}
}

func actorOr(actor string) string {
	if actor == "" {
		return orgaudit.SystemActor
	}
	return actor
}

// auditRefused records that a revoked or expired token of the org was
// presented, once per token and hour (a CI job retrying with an old token
// would otherwise write an entry per request). A failure to record does
// not change the answer, which is a 401 either way.
func auditRefused(ctx context.Context, db *gorm.DB, tok Token, why string, now time.Time) {
	err := orgaudit.Record(ctx, db, orgaudit.Entry{OrgID: tok.OrgID, Action: orgaudit.ManagementTokenRefused, Actor: Actor(tok),
		Summary:  fmt.Sprintf("%s management token %q (%s…) presented and refused", why, tok.Name, tok.Prefix),
		After:    stateOf(tok),
		DedupKey: "management_token.refused/" + tok.ID + "/" + now.UTC().Format("2006-01-02T15"), At: now})
	if err != nil {
		slog.WarnContext(ctx, "could not audit a refused management token", "token_id", tok.ID, "error", err)
	}
}

func audit(tx *gorm.DB, tok Token, action, actor string, at time.Time) error {
	row := keys.KeyAudit{ID: uuid.NewString(), OrgID: tok.OrgID, Scope: auditScope, Action: action, KeyID: tok.ID, Actor: actor, CreatedAt: at}
	if err := tx.Create(&row).Error; err != nil {
		return fmt.Errorf("audit management token %s: %w", action, err)
	}
	return nil
}
