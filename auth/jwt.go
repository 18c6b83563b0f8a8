package auth

import (
	"context"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"sync"
	"time"

	"encoding/base64"

	"github.com/golang-jwt/jwt/v5"
)

// Verifier checks identity-provider session JWTs: RS256 only, signature,
// expiry and not-before (with a small leeway for clock skew).
type Verifier struct {
	keyFunc jwt.Keyfunc
	parser  *jwt.Parser
}

const clockLeeway = 30 * time.Second

func newVerifier(kf jwt.Keyfunc) *Verifier {
	return &Verifier{
		keyFunc: kf,
		parser: jwt.NewParser(
			jwt.WithValidMethods([]string{"RS256"}),
			jwt.WithExpirationRequired(),
			jwt.WithLeeway(clockLeeway),
		),
	}
}

// NewPEMVerifier trusts one RSA public key given as PEM (CLERK_JWT_KEY).
func NewPEMVerifier(pemKey []byte) (*Verifier, error) {
	pub, err := jwt.ParseRSAPublicKeyFromPEM(pemKey)
	if err != nil {
		return nil, fmt.Errorf("parse identity JWT public key: %w", err)
	}
	return NewKeyVerifier(pub), nil
}

// NewKeyVerifier trusts one RSA public key.
func NewKeyVerifier(pub *rsa.PublicKey) *Verifier {
	return newVerifier(func(*jwt.Token) (any, error) { return pub, nil })
}

// NewJWKSVerifier trusts the keys published at url (CLERK_JWKS_URL), cached
// and refetched at most once a minute when a token names an unknown kid.
func NewJWKSVerifier(url string, client *http.Client) *Verifier {
	c := &jwksCache{url: url, client: client, keys: map[string]*rsa.PublicKey{}}
	return newVerifier(func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return c.key(context.Background(), kid)
	})
}

// Verify returns the session of a valid token.
func (v *Verifier) Verify(token string) (Session, error) {
	var c sessionClaims
	if _, err := v.parser.ParseWithClaims(token, &c, v.keyFunc); err != nil {
		return Session{}, fmt.Errorf("identity token: %w", err)
	}
	return c.session()
}

type jwksCache struct {
	url       string
	client    *http.Client
	mu        sync.Mutex
	keys      map[string]*rsa.PublicKey
	fetchedAt time.Time
}

func (c *jwksCache) key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k, ok := c.keys[kid]; ok {
		return k, nil
	}
	if time.Since(c.fetchedAt) < time.Minute {
		return nil, fmt.Errorf("unknown key id %q", kid)
	}
	if err := c.refresh(ctx); err != nil {
		return nil, err
	}
	if k, ok := c.keys[kid]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("unknown key id %q", kid)
}

func (c *jwksCache) refresh(ctx context.Context) error {
	c.fetchedAt = time.Now()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return fmt.Errorf("jwks request: %w", err)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("fetch jwks: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetch jwks: status %d", resp.StatusCode)
	}
	var set struct {
		Keys []struct {
			Kid, Kty, N, E string
		} `json:"keys"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<20)).Decode(&set); err != nil {
		return fmt.Errorf("decode jwks: %w", err)
	}
	keys := map[string]*rsa.PublicKey{}
	for _, k := range set.Keys {
		if k.Kty != "RSA" {
			continue
		}
		pub, err := rsaFromJWK(k.N, k.E)
		if err != nil {
			return fmt.Errorf("jwks key %q: %w", k.Kid, err)
		}
		keys[k.Kid] = pub
	}
	if len(keys) == 0 {
		return errors.New("jwks has no RSA keys")
	}
	c.keys = keys
	return nil
}

func rsaFromJWK(n, e string) (*rsa.PublicKey, error) {
	nb, err := base64.RawURLEncoding.DecodeString(n)
	if err != nil {
		return nil, fmt.Errorf("modulus: %w", err)
	}
	eb, err := base64.RawURLEncoding.DecodeString(e)
	if err != nil {
		return nil, fmt.Errorf("exponent: %w", err)
	}
	return &rsa.PublicKey{N: new(big.Int).SetBytes(nb), E: int(new(big.Int).SetBytes(eb).Int64())}, nil
}
