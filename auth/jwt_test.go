package auth

import (
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestVerifyReadsV1AndV2OrgClaims(t *testing.T) {
	s, err := NewSigner()
	if err != nil {
		t.Fatal(err)
	}
	v := s.Verifier()
	tok, err := s.Sign(Session{UserID: "user_1", OrgID: "org_1", Role: AdminRole, OrgSlug: "acme"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := v.Verify(tok)
	if err != nil || sess.OrgID != "org_1" || !sess.IsAdmin() || sess.UserID != "user_1" || sess.OrgSlug != "acme" {
		t.Fatalf("v1 claims: %+v %v", sess, err)
	}
	// v2 shape: {"o": {"id", "rol", "slg"}} with the role unprefixed.
	claims := jwt.MapClaims{"sub": "user_2", "exp": time.Now().Add(time.Hour).Unix(), "o": map[string]any{"id": "org_2", "rol": "admin", "slg": "beta"}}
	raw, err := jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(s.key)
	if err != nil {
		t.Fatal(err)
	}
	sess, err = v.Verify(raw)
	if err != nil || sess.OrgID != "org_2" || sess.Role != AdminRole || sess.OrgSlug != "beta" {
		t.Fatalf("v2 claims: %+v %v", sess, err)
	}
}

func TestVerifyRejects(t *testing.T) {
	s, _ := NewSigner()
	other, _ := NewSigner()
	v := s.Verifier()
	expired, _ := s.Sign(Session{UserID: "u", OrgID: "o"}, -time.Minute)
	foreign, _ := other.Sign(Session{UserID: "u", OrgID: "o"}, time.Hour)
	noOrg, _ := s.Sign(Session{UserID: "u"}, time.Hour)
	noExp, _ := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": "u", "org_id": "o"}).SignedString(s.key)
	hs, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "u", "org_id": "o", "exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte("secret"))
	good, _ := s.Sign(Session{UserID: "u", OrgID: "o"}, time.Hour)
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"u","org_id":"evil","exp":9999999999}`)) + "." + parts[2]
	for name, tok := range map[string]string{"expired": expired, "foreign key": foreign, "no org": noOrg, "no exp": noExp, "HS256": hs, "tampered": tampered, "garbage": "a.b.c", "empty": ""} {
		if _, err := v.Verify(tok); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := v.Verify(good); err != nil {
		t.Fatalf("good token rejected: %v", err)
	}
}

func TestPEMVerifierAndJWKS(t *testing.T) {
	s, _ := NewSigner()
	pv, err := NewPEMVerifier(s.PublicPEM())
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := s.Sign(Session{UserID: "u", OrgID: "o"}, time.Hour)
	if _, err := pv.Verify(tok); err != nil {
		t.Fatalf("PEM verifier: %v", err)
	}
	if _, err := NewPEMVerifier([]byte("not a key")); err == nil {
		t.Fatal("bad PEM accepted")
	}

	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		pub := s.key.PublicKey
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
			"kid": "k1", "kty": "RSA",
			"n": base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
			"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
		}}})
	}))
	defer srv.Close()
	jv := NewJWKSVerifier(srv.URL, srv.Client())
	withKid := func(kid string) string {
		tk := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": "u", "org_id": "o", "exp": time.Now().Add(time.Hour).Unix()})
		tk.Header["kid"] = kid
		raw, _ := tk.SignedString(s.key)
		return raw
	}
	for i := 0; i < 3; i++ {
		if _, err := jv.Verify(withKid("k1")); err != nil {
			t.Fatalf("JWKS verify: %v", err)
		}
	}
	if fetches.Load() != 1 {
		t.Fatalf("JWKS fetched %d times, want 1 (cached)", fetches.Load())
	}
	if _, err := jv.Verify(withKid("unknown")); err == nil {
		t.Fatal("unknown kid accepted")
	}
}

func TestAPIKeys(t *testing.T) {
	for _, scope := range []Scope{Publishable, Secret} {
		k, err := GenerateKey(scope)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := ScopeOfKey(k.Plain)
		if !ok || got != scope || HashKey(k.Plain) != k.Hash || strings.Contains(k.Hash, k.Plain) {
			t.Fatalf("%s key %q: scope %v %v", scope, k.Plain, got, ok)
		}
		k2, _ := GenerateKey(scope)
		if k2.Plain == k.Plain {
			t.Fatal("keys repeat")
		}
	}
	for _, bad := range []string{"", "pk_short", "xx_" + strings.Repeat("a", 43), "sk_" + strings.Repeat("a", 50)} {
		if _, ok := ScopeOfKey(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := ParseScope("admin"); err == nil {
		t.Fatal("bad scope accepted")
	}
}
