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
