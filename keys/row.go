package keys

import "time"

// APIKey is an org key. Only the SHA-256 hash of the key is stored, except
// for publishable keys, which are safe client-side and which an admin may
// read again (docs/architecture.md §8); secret keys can never be read back.
type APIKey struct {
	ID          string `gorm:"primaryKey;type:uuid"`
	OrgID       string `gorm:"type:uuid"`
	Scope       string
	KeyHash     string
	Prefix      string
	Publishable *string
	CreatedAt   time.Time
	RevokedAt   *time.Time
}

// KeyAudit records every issue and revocation of a key, without the key.
type KeyAudit struct {
	ID        string `gorm:"primaryKey;type:uuid"`
	OrgID     string `gorm:"type:uuid"`
	Scope     string
	Action    string
	KeyID     string `gorm:"type:uuid"`
	Actor     string
	CreatedAt time.Time
}

// TableName keeps the table name singular-free and explicit.
func (KeyAudit) TableName() string { return "key_audit" }
