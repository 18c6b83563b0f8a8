// Package secrets seals the few customer secrets expd must keep usable
// (an LLM judge's API key, the business-event and webhook signing secrets;
// docs/operations.md "Secrets at rest") with the
// server key EXPD_SECRETS_KEY: AES-256-GCM from the standard library, the
// key's id in front of every sealed value so that a value sealed under
// the previous key (EXPD_SECRETS_KEY_PREVIOUS) still opens during a
// rotation, and the owning row's id as additional data so a sealed value
// copied into another row does not open.
package secrets

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// KeySize is the size of a server key: 32 random bytes (AES-256).
const KeySize = 32

// prefix marks the sealed format: "v1.<key id>.<base64url(nonce|ciphertext)>".
const prefix = "v1"

// ErrNoKey: no server key is configured, so nothing can be sealed.
var ErrNoKey = errors.New("no secrets key configured (EXPD_SECRETS_KEY)")

// ErrUnknownKey: the value was sealed under a key this server does not
// hold (neither EXPD_SECRETS_KEY nor EXPD_SECRETS_KEY_PREVIOUS).
var ErrUnknownKey = errors.New("sealed under a secrets key this server does not hold")

// ErrCorrupt: the value is not one this package sealed, or it was
// altered, or it belongs to another row.
var ErrCorrupt = errors.New("sealed secret is malformed or does not belong here")

type key struct {
	id   string
	aead cipher.AEAD
	mac  []byte // base of the keyed hashes (MAC), derived from the key
}

// Keyring holds the current key (seals and opens) and optionally the
// previous one (opens only). The zero Keyring holds none.
type Keyring struct {
	current  *key
	previous *key
}

// Parse reads the base64 (standard or URL, padded or not) keys of
// EXPD_SECRETS_KEY and EXPD_SECRETS_KEY_PREVIOUS; empty current gives an
// empty keyring (previous is then refused: it would open but never seal).
func Parse(current, previous string) (*Keyring, error) {
	k := &Keyring{}
	if current == "" {
		if previous != "" {
			return nil, errors.New("EXPD_SECRETS_KEY_PREVIOUS is set without EXPD_SECRETS_KEY")
		}
		return k, nil
	}
	var err error
	if k.current, err = parseKey(current); err != nil {
		return nil, fmt.Errorf("EXPD_SECRETS_KEY: %w", err)
	}
	if previous != "" {
		if k.previous, err = parseKey(previous); err != nil {
			return nil, fmt.Errorf("EXPD_SECRETS_KEY_PREVIOUS: %w", err)
		}
	}
	return k, nil
}

// NewKey returns a fresh server key in the form Parse reads.
func NewKey() (string, error) {
	b := make([]byte, KeySize)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate secrets key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

func parseKey(s string) (*key, error) {
	s = strings.TrimSpace(s)
	var raw []byte
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			raw = b
			break
		}
	}
	if len(raw) != KeySize {
		return nil, fmt.Errorf("want %d random bytes in base64 (openssl rand -base64 32)", KeySize)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("aes: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("gcm: %w", err)
	}
	// The id names the key without revealing it: 8 bytes of a hash under
	// a label, enough to tell two keys apart.
	sum := sha256.Sum256(append([]byte("expd-secrets-key-id:"), raw...))
	base := hmac.New(sha256.New, raw)
	base.Write([]byte("expd-mac"))
	return &key{id: hex.EncodeToString(sum[:8]), aead: aead, mac: base.Sum(nil)}, nil
}

// Configured tells whether secrets can be sealed.
func (k *Keyring) Configured() bool { return k != nil && k.current != nil }

// Seal encrypts plaintext under the current key, bound to owner (the id
// of the row that stores it).
func (k *Keyring) Seal(plaintext, owner string) (string, error) {
	if !k.Configured() {
		return "", ErrNoKey
	}
	nonce := make([]byte, k.current.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("generate nonce: %w", err)
	}
	sealed := k.current.aead.Seal(nonce, nonce, []byte(plaintext), []byte(owner))
	return prefix + "." + k.current.id + "." + base64.RawURLEncoding.EncodeToString(sealed), nil
}

// Open decrypts a value Seal made for owner, under the current or the
// previous key.
func (k *Keyring) Open(sealed, owner string) (string, error) {
	parts := strings.Split(sealed, ".")
	if len(parts) != 3 || parts[0] != prefix {
		return "", ErrCorrupt
	}
	var use *key
	for _, c := range []*key{k.currentKey(), k.previousKey()} {
		if c != nil && c.id == parts[1] {
			use = c
		}
	}
	if use == nil {
		return "", ErrUnknownKey
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(raw) < use.aead.NonceSize() {
		return "", ErrCorrupt
	}
	n := use.aead.NonceSize()
	plain, err := use.aead.Open(nil, raw[:n], raw[n:], []byte(owner))
	if err != nil {
		return "", ErrCorrupt
	}
	return string(plain), nil
}

// Current tells whether sealed is under the current key (false: it opens
// only with the previous key and should be sealed again).
func (k *Keyring) Current(sealed string) bool {
	parts := strings.SplitN(sealed, ".", 3)
	return k.Configured() && len(parts) == 3 && parts[1] == k.current.id
}

// MAC is the keyed hash (HMAC-SHA256, hex) of msg under a key derived
// from the current server key for purpose, so that hashes of one purpose
// do not match another's. It names a value that must not be stored
// itself (a user id an erasure removes) and is stable while the server
// key is.
func (k *Keyring) MAC(purpose, msg string) (string, error) {
	if !k.Configured() {
		return "", ErrNoKey
	}
	return k.current.sum(purpose, msg), nil
}

// MACs is msg's MAC under the current key and, during a rotation, under
// the previous one too: what a lookup of hashes stored before the
// rotation compares with. Empty without a key.
func (k *Keyring) MACs(purpose, msg string) []string {
	var out []string
	for _, c := range []*key{k.currentKey(), k.previousKey()} {
		if c != nil {
			out = append(out, c.sum(purpose, msg))
		}
	}
	return out
}

func (c *key) sum(purpose, msg string) string {
	derived := hmac.New(sha256.New, c.mac)
	derived.Write([]byte(purpose))
	h := hmac.New(sha256.New, derived.Sum(nil))
	h.Write([]byte(msg))
	return hex.EncodeToString(h.Sum(nil))
}

func (k *Keyring) currentKey() *key {
	if k == nil {
		return nil
	}
	return k.current
}

func (k *Keyring) previousKey() *key {
	if k == nil {
		return nil
	}
	return k.previous
}

// IsSealed tells whether stored is in the sealed format (under any key).
// Secrets stored before sealing (the "whsec_..." signing secrets) are not.
func IsSealed(stored string) bool { return strings.HasPrefix(stored, prefix+".") }

// OpenStored opens a stored secret for owner. A value stored in clear
// before sealing existed is returned as is, so a server upgraded before
// `expd migrate` sealed its rows keeps verifying; Reseal seals it.
func (k *Keyring) OpenStored(stored, owner string) (string, error) {
	if !IsSealed(stored) {
		return stored, nil
	}
	return k.Open(stored, owner)
}

// Reseal returns stored sealed under the current key for owner, and
// whether that changed it: a clear value is sealed, a value sealed under
// the previous key is sealed again, one under the current key is kept.
// Without a key a clear value is ErrNoKey; a value sealed under a key
// this server does not hold is ErrUnknownKey.
func (k *Keyring) Reseal(stored, owner string) (string, bool, error) {
	if stored == "" || k.Current(stored) { // "": no secret (a code evaluator has no key)
		return stored, false, nil
	}
	if IsSealed(stored) && !k.Configured() {
		return stored, false, nil // nothing to reseal with; it opens only where a key is set anyway
	}
	plain, err := k.OpenStored(stored, owner)
	if err != nil {
		return stored, false, err
	}
	sealed, err := k.Seal(plain, owner)
	if err != nil {
		return stored, false, err
	}
	return sealed, true, nil
}

// Tally counts what a pass of ResealColumn did.
type Tally struct {
	Sealed   int // stored in clear, now sealed
	Resealed int // sealed under the previous key, now under the current one
	Clear    int // stored in clear and left so: no key is configured
	Lost     int // sealed under a key this server does not hold, or damaged: left as is
}

// Plus sums two tallies.
func (t Tally) Plus(o Tally) Tally {
	return Tally{Sealed: t.Sealed + o.Sealed, Resealed: t.Resealed + o.Resealed, Clear: t.Clear + o.Clear, Lost: t.Lost + o.Lost}
}

// Column names a table's column of sealed secrets: the column, the row
// key it is read and written by, and the owner (additional data) each
// row's value is sealed with. The table's owner package declares it.
type Column struct {
	Table, Key, Secret string
	Owner              func(key string) string
}

// ResealColumn passes every non-empty value of c through Reseal and writes each
// that changed, only where the row still holds the value read, so a
// concurrent pass or an edit in between is never overwritten. Values that
// cannot be opened are counted (Lost), not fatal: one lost row must not
// stop the others, or a migration, from being sealed.
func (k *Keyring) ResealColumn(ctx context.Context, db *gorm.DB, c Column) (Tally, error) {
	var rows []struct{ K, V string } // row key, stored value
	err := db.WithContext(ctx).Table(c.Table).Select(c.Key+" AS k", c.Secret+" AS v").
		Where(c.Secret + " <> ''").Order(c.Key).Scan(&rows).Error
	if err != nil {
		return Tally{}, fmt.Errorf("read %s.%s: %w", c.Table, c.Secret, err)
	}
	var t Tally
	for _, r := range rows {
		sealed, changed, err := k.Reseal(r.V, c.Owner(r.K))
		switch {
		case errors.Is(err, ErrNoKey):
			t.Clear++
			continue
		case errors.Is(err, ErrUnknownKey), errors.Is(err, ErrCorrupt):
			t.Lost++
			continue
		case err != nil:
			return t, fmt.Errorf("%s %s: %w", c.Table, r.K, err)
		case !changed:
			continue
		}
		err = db.WithContext(ctx).Table(c.Table).Where(c.Key+" = ? AND "+c.Secret+" = ?", r.K, r.V).
			Update(c.Secret, sealed).Error
		if err != nil {
			return t, fmt.Errorf("seal %s.%s of %s: %w", c.Table, c.Secret, r.K, err)
		}
		if IsSealed(r.V) {
			t.Resealed++
		} else {
			t.Sealed++
		}
	}
	return t, nil
}
