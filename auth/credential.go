package auth

import (
	"crypto/rand"
	"fmt"
	"hash/crc32"
	"math/big"
	"strings"
)

// Every credential expd issues has the shape <prefix><body><checksum>:
// a prefix naming its kind (expd_pk_, expd_sk_, expd_mt_), 43 base62
// characters carrying 256 random bits, and 6 base62 characters of CRC-32
// over prefix and body. The prefix lets secret scanners find a leaked
// credential and say what it is; the checksum lets them (and expd, before
// any lookup) tell a real one from a random string of the same shape.
const (
	PublishablePrefix     = "expd_pk_"
	SecretPrefix          = "expd_sk_"
	ManagementTokenPrefix = "expd_mt_"

	credentialBodyLen     = 43 // base62 digits of a 256-bit number
	credentialChecksumLen = 6  // base62 digits of a 32-bit number
	credentialPrefixLen   = len("expd_xx_")
	// CredentialLen is the length of every credential in the current format.
	CredentialLen = credentialPrefixLen + credentialBodyLen + credentialChecksumLen
	// displayPrefixLen is how much of a credential is safe to show and log.
	displayPrefixLen = credentialPrefixLen + 4
)

const base62Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewKey is a freshly generated credential: Plain is shown once, Hash is
// stored.
type NewKey struct {
	Plain  string
	Hash   string
	Prefix string // first characters, safe to display and log
}

// newCredential makes a credential of the given prefix.
func newCredential(prefix string) (NewKey, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return NewKey{}, fmt.Errorf("generate credential: %w", err)
	}
	body := base62(new(big.Int).SetBytes(b[:]), credentialBodyLen)
	plain := prefix + body + checksum(prefix+body)
	return NewKey{Plain: plain, Hash: HashKey(plain), Prefix: plain[:displayPrefixLen]}, nil
}

// hasValidChecksum tells whether s is a current-format credential of the
// prefix with a matching checksum.
func hasValidChecksum(s, prefix string) bool {
	if len(s) != CredentialLen || !strings.HasPrefix(s, prefix) {
		return false
	}
	cut := len(s) - credentialChecksumLen
	for i := len(prefix); i < len(s); i++ {
		if strings.IndexByte(base62Digits, s[i]) < 0 {
			return false
		}
	}
	return checksum(s[:cut]) == s[cut:]
}

func checksum(s string) string {
	return base62(new(big.Int).SetUint64(uint64(crc32.ChecksumIEEE([]byte(s)))), credentialChecksumLen)
}

// base62 writes n in exactly width base62 digits, zero-padded on the left.
func base62(n *big.Int, width int) string {
	out := make([]byte, width)
	base := big.NewInt(62)
	mod := new(big.Int)
	for i := width - 1; i >= 0; i-- {
		n.DivMod(n, base, mod)
		out[i] = base62Digits[mod.Int64()]
	}
	return string(out)
}

// GenerateManagementToken makes an org management token (expd_mt_...).
func GenerateManagementToken() (NewKey, error) { return newCredential(ManagementTokenPrefix) }

// IsManagementToken tells whether s has the shape and checksum of a
// management token, so malformed tokens are refused before any lookup.
func IsManagementToken(s string) bool { return hasValidChecksum(s, ManagementTokenPrefix) }

// CredentialDisplay is the part of a credential that is safe to show.
func CredentialDisplay(s string) string {
	if len(s) < displayPrefixLen {
		return s
	}
	return s[:displayPrefixLen]
}
