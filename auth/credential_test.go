package auth

import (
	"regexp"
	"strings"
	"testing"
)

// Every credential kind has its prefix, a fixed length, base62 only, and a
// checksum that catches any single changed character.
func TestCredentialFormat(t *testing.T) {
	shape := regexp.MustCompile(`^expd_(pk|sk|mt)_[0-9A-Za-z]{49}$`)
	gen := map[string]func() (NewKey, error){
		PublishablePrefix:     func() (NewKey, error) { return GenerateKey(Publishable) },
		SecretPrefix:          func() (NewKey, error) { return GenerateKey(Secret) },
		ManagementTokenPrefix: GenerateManagementToken,
	}
	for prefix, g := range gen {
		k, err := g()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(k.Plain, prefix) || !shape.MatchString(k.Plain) || len(k.Plain) != CredentialLen {
			t.Fatalf("%q: bad shape", k.Plain)
		}
		if !hasValidChecksum(k.Plain, prefix) || k.Prefix != k.Plain[:12] || CredentialDisplay(k.Plain) != k.Prefix {
			t.Fatalf("%q: checksum or display prefix wrong", k.Plain)
		}
		// One changed character anywhere after the prefix breaks the checksum.
		for i := len(prefix); i < len(k.Plain); i++ {
			b := []byte(k.Plain)
			b[i] = base62Digits[(strings.IndexByte(base62Digits, b[i])+1)%62]
			if hasValidChecksum(string(b), prefix) {
				t.Fatalf("%q with position %d changed still passes", k.Plain, i)
			}
		}
	}
	mt, _ := GenerateManagementToken()
	if _, ok := ScopeOfKey(mt.Plain); ok {
		t.Fatal("a management token is taken for an SDK key")
	}
	sk, _ := GenerateKey(Secret)
	if IsManagementToken(sk.Plain) || !IsManagementToken(mt.Plain) {
		t.Fatal("management token recognition is wrong")
	}
	// Keys issued before the expd_ prefixes keep working.
	for plain, want := range map[string]Scope{"pk_" + strings.Repeat("A", 43): Publishable, "sk_" + strings.Repeat("b-", 21) + "c": Secret} {
		if got, ok := ScopeOfKey(plain); !ok || got != want {
			t.Fatalf("legacy %q: %v %v", plain, got, ok)
		}
	}
	for _, bad := range []string{"expd_sk_", "expd_sk_" + strings.Repeat("A", 49), "expd_pk_" + strings.Repeat("0", 48) + "!", "expd_xx_" + mt.Plain[8:]} {
		if _, ok := ScopeOfKey(bad); ok || IsManagementToken(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}
