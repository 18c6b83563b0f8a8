package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
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
		return "sk_"
	}
	return "pk_"
}

// NewKey is a freshly generated key: Plain is shown once, Hash is stored.
type NewKey struct {
	Plain  string
	Hash   string
	Prefix string // first characters, safe to display and log
}

// GenerateKey makes a key of the scope from 32 random bytes.
func GenerateKey(s Scope) (NewKey, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return NewKey{}, fmt.Errorf("generate key: %w", err)
	}
	plain := s.prefix() + base64.RawURLEncoding.EncodeToString(b[:])
	return NewKey{Plain: plain, Hash: HashKey(plain), Prefix: plain[:10]}, nil
}

// HashKey is the stored form of a key: hex SHA-256. Keys carry 256 bits of
// entropy, so a fast hash is enough; lookups go by hash through a unique
// index, and callers compare the found hash in constant time.
func HashKey(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

// ScopeOfKey tells which scope a presented key claims by its prefix, so
// malformed keys are refused before any lookup.
func ScopeOfKey(plain string) (Scope, bool) {
	switch {
	case strings.HasPrefix(plain, "pk_") && len(plain) == 46:
		return Publishable, true
	case strings.HasPrefix(plain, "sk_") && len(plain) == 46:
		return Secret, true
	}
	return "", false
}
