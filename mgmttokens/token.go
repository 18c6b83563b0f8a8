package mgmttokens

import "time"

// Token is an org credential for the dashboard routes, used by
// scripts and CI. Only the SHA-256 hash of the token is stored.
type Token struct {
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

// Management token states (Token.State).
const (
	TokenLive    = "live"
	TokenRevoked = "revoked"
	TokenExpired = "expired"
)

// TableName names the table of migration 0160.
func (Token) TableName() string { return "management_tokens" }

// State tells whether the token is live at now, or why not: the server's
// check and the CLI's listing read it the same way.
func (t Token) State(now time.Time) string {
	switch {
	case t.RevokedAt != nil:
		return TokenRevoked
	case t.ExpiresAt != nil && !t.ExpiresAt.After(now):
		return TokenExpired
	}
	return TokenLive
}

// IssuedToken is a token as issued by POST
// /v1/management-tokens: the only answer that carries the plaintext.
type IssuedToken struct {
	Token
	Plaintext string `json:"token"`
}

// TokenList is the body of GET /v1/management-tokens.
type TokenList struct {
	ManagementTokens []Token `json:"management_tokens"`
}
