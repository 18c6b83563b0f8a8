package secrets_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/expd/expd/secrets"
)

func mustKey(t *testing.T) string {
	t.Helper()
	k, err := secrets.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpenAndRotation(t *testing.T) {
	oldKey, newKey := mustKey(t), mustKey(t)
	old, err := secrets.Parse(oldKey, "")
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := old.Seal("sk-live-plaintext", "row-1")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "sk-live-plaintext") || !strings.HasPrefix(sealed, "v1.") {
		t.Fatalf("sealed %q", sealed)
	}
	if got, err := old.Open(sealed, "row-1"); err != nil || got != "sk-live-plaintext" {
		t.Fatalf("open: %q %v", got, err)
	}
	// Bound to its row.
	if _, err := old.Open(sealed, "row-2"); !errors.Is(err, secrets.ErrCorrupt) {
		t.Fatalf("open under another owner: %v", err)
	}
	// Tampered.
	tampered := sealed[:len(sealed)-2] + "AA"
	if _, err := old.Open(tampered, "row-1"); !errors.Is(err, secrets.ErrCorrupt) {
		t.Fatalf("tampered: %v", err)
	}
	// Rotation: the new key opens the old value through PREVIOUS; alone it cannot.
	rotated, err := secrets.Parse(newKey, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rotated.Open(sealed, "row-1"); err != nil || got != "sk-live-plaintext" {
		t.Fatalf("open after rotation: %q %v", got, err)
	}
	if rotated.Current(sealed) {
		t.Fatal("a value under the previous key reported current")
	}
	onlyNew, _ := secrets.Parse(newKey, "")
	if _, err := onlyNew.Open(sealed, "row-1"); !errors.Is(err, secrets.ErrUnknownKey) {
		t.Fatalf("open without the previous key: %v", err)
	}
	resealed, _ := rotated.Seal("sk-live-plaintext", "row-1")
	if !rotated.Current(resealed) || !onlyNew.Current(resealed) {
		t.Fatal("a fresh seal is not under the current key")
	}
	// Two seals of the same value differ (random nonce).
	again, _ := old.Seal("sk-live-plaintext", "row-1")
	if again == sealed {
		t.Fatal("nonce reused")
	}
}

func TestParseRefusesBadKeys(t *testing.T) {
	for name, c := range map[string][2]string{
		"short":                {"c2hvcnQ=", ""},
		"not base64":           {"!!!", ""},
		"previous without key": {"", mustKey(t)},
		"bad previous":         {mustKey(t), "c2hvcnQ="},
	} {
		if _, err := secrets.Parse(c[0], c[1]); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	empty, err := secrets.Parse("", "")
	if err != nil || empty.Configured() {
		t.Fatalf("empty keyring: %v", err)
	}
	if _, err := empty.Seal("x", "y"); !errors.Is(err, secrets.ErrNoKey) {
		t.Fatalf("seal without a key: %v", err)
	}
	var nilRing *secrets.Keyring
	if _, err := nilRing.Open("v1.aa.bb", "y"); !errors.Is(err, secrets.ErrUnknownKey) {
		t.Fatalf("nil keyring open: %v", err)
	}
}
