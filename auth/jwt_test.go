package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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
	claims := jwt.MapClaims{"sub": "user_2", "iss": DevIssuer, "exp": time.Now().Add(time.Hour).Unix(), "o": map[string]any{"id": "org_2", "rol": "admin", "slg": "beta"}}
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

}

// jwksServer publishes the public keys of signers under their kids; keys
// can be added while it runs (a rotation).
type jwksServer struct {
	*httptest.Server
	mu      sync.Mutex
	keys    map[string]*Signer
	fetches atomic.Int32
}

func newJWKSServer(t *testing.T) *jwksServer {
	j := &jwksServer{keys: map[string]*Signer{}}
	j.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		j.fetches.Add(1)
		j.mu.Lock()
		defer j.mu.Unlock()
		var set []map[string]string
		for kid, s := range j.keys {
			pub := s.key.PublicKey
			set = append(set, map[string]string{"kid": kid, "kty": "RSA", "alg": "RS256", "use": "sig",
				"n": base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
				"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes())})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": set})
	}))
	t.Cleanup(j.Close)
	return j
}

func (j *jwksServer) publish(kid string, s *Signer) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.keys[kid] = s
}

func signWithKid(t *testing.T, s *Signer, kid string, claims jwt.MapClaims) string {
	t.Helper()
	if claims == nil {
		claims = jwt.MapClaims{}
	}
	claims["sub"], claims["org_id"], claims["exp"] = "u", "o", time.Now().Add(time.Hour).Unix()
	tk := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tk.Header["kid"] = kid
	raw, err := tk.SignedString(s.key)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// A key rotation (a token under a new kid, published after the verifier
// started) is picked up without a restart; unknown kids are refetched at
// most once a minute, so a flood of forged kids cannot hammer the
// provider.
func TestJWKSRotationWithoutRestart(t *testing.T) {
	first, _ := NewSigner()
	second, _ := NewSigner()
	j := newJWKSServer(t)
	j.publish("k1", first)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v, err := NewJWKSVerifier(ctx, j.URL, j.Client())
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := v.Verify(signWithKid(t, first, "k1", nil)); err != nil {
			t.Fatalf("k1: %v", err)
		}
	}
	if n := j.fetches.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times for one kid, want 1 (cached)", n)
	}
	j.publish("k2", second)
	if _, err := v.Verify(signWithKid(t, second, "k2", nil)); err != nil {
		t.Fatalf("rotated key k2 not picked up: %v", err)
	}
	if n := j.fetches.Load(); n != 2 {
		t.Fatalf("JWKS fetched %d times after the rotation, want 2", n)
	}
	for range 5 {
		if _, err := v.Verify(signWithKid(t, second, "forged", nil)); err == nil {
			t.Fatal("unknown kid accepted")
		}
	}
	if n := j.fetches.Load(); n != 2 {
		t.Fatalf("unknown kids refetched the JWKS: %d fetches, want 2 (rate limited)", n)
	}
}

func TestIssuerAndAuthorizedPartyChecks(t *testing.T) {
	s, _ := NewSigner()
	v := NewKeyVerifier(&s.key.PublicKey).WithChecks(Checks{Issuer: "https://clerk.example.com", Audience: "expd",
		AuthorizedParties: []string{"https://app.example.com"}})
	cases := []struct {
		name   string
		claims jwt.MapClaims
		ok     bool
	}{
		{"right iss, aud and azp", jwt.MapClaims{"iss": "https://clerk.example.com", "aud": "expd", "azp": "https://app.example.com"}, true},
		{"aud as a list", jwt.MapClaims{"iss": "https://clerk.example.com", "aud": []string{"x", "expd"}, "azp": "https://app.example.com"}, true},
		{"right iss and aud, no azp", jwt.MapClaims{"iss": "https://clerk.example.com", "aud": "expd"}, false},
		{"other iss", jwt.MapClaims{"iss": "https://evil.example.com", "aud": "expd", "azp": "https://app.example.com"}, false},
		{"no iss", jwt.MapClaims{"aud": "expd", "azp": "https://app.example.com"}, false},
		{"other aud", jwt.MapClaims{"iss": "https://clerk.example.com", "aud": "other", "azp": "https://app.example.com"}, false},
		{"no aud", jwt.MapClaims{"iss": "https://clerk.example.com", "azp": "https://app.example.com"}, false},
		{"other azp", jwt.MapClaims{"iss": "https://clerk.example.com", "aud": "expd", "azp": "https://evil.example.com"}, false},
	}
	for _, c := range cases {
		_, err := v.Verify(signWithKid(t, s, "k", c.claims))
		if (err == nil) != c.ok {
			t.Errorf("%s: err %v, want ok=%v", c.name, err, c.ok)
		}
	}
	// Without origins, azp is not required; without an audience, aud is
	// not checked.
	issOnly := NewKeyVerifier(&s.key.PublicKey).WithChecks(Checks{Issuer: "https://clerk.example.com"})
	if _, err := issOnly.Verify(signWithKid(t, s, "k", jwt.MapClaims{"iss": "https://clerk.example.com", "aud": "any"})); err != nil {
		t.Fatalf("issuer-only verifier: %v", err)
	}
	// Without checks configured, no claim matters.
	if _, err := NewKeyVerifier(&s.key.PublicKey).Verify(signWithKid(t, s, "k", jwt.MapClaims{"iss": "x", "azp": "y"})); err != nil {
		t.Fatalf("unchecked verifier: %v", err)
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
