package testenv

import (
	"sync"
	"testing"

	"github.com/expd/expd/secrets"
)

var (
	keyringOnce sync.Once
	keyring     *secrets.Keyring
)

// Keyring is one EXPD_SECRETS_KEY per test binary: the default of New's
// API and NewWithWorker's activities, which seal and open signing
// secrets with it.
func Keyring(t testing.TB) *secrets.Keyring {
	t.Helper()
	keyringOnce.Do(func() { keyring = NewKeyring(t) })
	return keyring
}

// NewKeyring is a keyring of a fresh key.
func NewKeyring(t testing.TB) *secrets.Keyring {
	t.Helper()
	k, err := secrets.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	ring, err := secrets.Parse(k, "")
	if err != nil {
		t.Fatal(err)
	}
	return ring
}
