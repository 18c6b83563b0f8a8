package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Scope of an API key.
type Scope string

const (
	// Publishable keys are safe client-side and write-only.
	Publishable Scope = "publishable"
	// Secret keys are server-side only.
	Secret Scope = "secret"
)

// ParseScope validates a scope name.
func ParseScope(s string) (Scope, error) {
	switch Scope(s) {
	case Publishable, Secret:
		return Scope(s), nil
	}
	return "", fmt.Errorf("scope must be %q or %q", Publishable, Secret)
}

func (s Scope) prefix() string {
	if s == Secret {
		return SecretPrefix
	}
	return PublishablePrefix
}

// GenerateKey makes an SDK key of the scope (credential.go).
func GenerateKey(s Scope) (NewKey, error) { return newCredential(s.prefix()) }

// HashKey is the stored form of a key: hex SHA-256. Keys carry 256 bits of
// entropy, so a fast hash is enough; lookups go by hash through a unique
// index, and callers compare the found hash in constant time.
func HashKey(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

// ScopeOfKey tells which scope a presented key claims by its prefix and
// checksum, so malformed keys are refused before any lookup. Keys issued
// before the expd_ prefixes (pk_/sk_ and 43 base64url characters) keep
// working.
func ScopeOfKey(plain string) (Scope, bool) {
	switch {
	case hasValidChecksum(plain, PublishablePrefix):
		return Publishable, true
	case hasValidChecksum(plain, SecretPrefix):
		return Secret, true
	case strings.HasPrefix(plain, "pk_") && len(plain) == legacyKeyLen:
		return Publishable, true
	case strings.HasPrefix(plain, "sk_") && len(plain) == legacyKeyLen:
		return Secret, true
	}
	return "", false
}

// legacyKeyLen is the length of a key issued before the expd_ prefixes.
const legacyKeyLen = 46
