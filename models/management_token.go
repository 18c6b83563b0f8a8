package models

import "time"

// ManagementToken is an org credential for the dashboard routes, used by
// scripts and CI. Only the SHA-256 hash of the token is stored.
type ManagementToken struct {
	ID         string     `gorm:"primaryKey;type:uuid" json:"id"`
	OrgID      string     `gorm:"type:uuid" json:"-"`
	Name       string     `json:"name"`
	Role       string     `json:"role"`
	TokenHash  string     `json:"-"`
	Prefix     string     `json:"prefix"`
	CreatedBy  string     `json:"created_by"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

// Management token states (ManagementToken.State).
const (
	TokenLive    = "live"
	TokenRevoked = "revoked"
	TokenExpired = "expired"
)

// State tells whether the token is live at now, or why not: the server's
// check and the CLI's listing read it the same way.
func (t ManagementToken) State(now time.Time) string {
	switch {
	case t.RevokedAt != nil:
		return TokenRevoked
	case t.ExpiresAt != nil && !t.ExpiresAt.After(now):
		return TokenExpired
	}
	return TokenLive
}

// IssuedManagementToken is a token as issued by POST
// /v1/management-tokens: the only answer that carries the plaintext.
type IssuedManagementToken struct {
	ManagementToken
	Token string `json:"token"`
}

// ManagementTokenList is the body of GET /v1/management-tokens.
type ManagementTokenList struct {
	ManagementTokens []ManagementToken `json:"management_tokens"`
}
