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

func TestResealAndOpenStored(t *testing.T) {
	oldKey, newKey := mustKey(t), mustKey(t)
	old, _ := secrets.Parse(oldKey, "")
	rotated, _ := secrets.Parse(newKey, oldKey)
	none := &secrets.Keyring{}

	// A value stored in clear before sealing opens as is and is sealed.
	if got, err := rotated.OpenStored("whsec_clear", "row-1"); err != nil || got != "whsec_clear" {
		t.Fatalf("open clear: %q %v", got, err)
	}
	sealed, changed, err := rotated.Reseal("whsec_clear", "row-1")
	if err != nil || !changed || !secrets.IsSealed(sealed) || !rotated.Current(sealed) {
		t.Fatalf("reseal clear: %q %v %v", sealed, changed, err)
	}
	if got, err := rotated.OpenStored(sealed, "row-1"); err != nil || got != "whsec_clear" {
		t.Fatalf("open resealed: %q %v", got, err)
	}
	// Under the current key: kept.
	if again, changed, err := rotated.Reseal(sealed, "row-1"); err != nil || changed || again != sealed {
		t.Fatalf("reseal current: %v %v", changed, err)
	}
	// Under the previous key: sealed again under the current one.
	underOld, _ := old.Seal("whsec_old", "row-2")
	moved, changed, err := rotated.Reseal(underOld, "row-2")
	if err != nil || !changed || !rotated.Current(moved) {
		t.Fatalf("reseal previous: %v %v", changed, err)
	}
	// Bound to its row, also when resealing.
	if _, _, err := rotated.Reseal(underOld, "row-3"); !errors.Is(err, secrets.ErrCorrupt) {
		t.Fatalf("reseal under another owner: %v", err)
	}
	// Without a key: a clear value cannot be sealed, a sealed one is kept.
	if _, _, err := none.Reseal("whsec_clear", "row-1"); !errors.Is(err, secrets.ErrNoKey) {
		t.Fatalf("reseal clear without a key: %v", err)
	}
	if kept, changed, err := none.Reseal(sealed, "row-1"); err != nil || changed || kept != sealed {
		t.Fatalf("reseal sealed without a key: %v %v", changed, err)
	}
	// Nothing stored: nothing to seal.
	if v, changed, err := rotated.Reseal("", "row-1"); v != "" || changed || err != nil {
		t.Fatalf("reseal empty: %q %v %v", v, changed, err)
	}
}
