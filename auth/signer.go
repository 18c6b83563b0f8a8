package auth

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Signer mints session tokens in the identity provider's v1 shape. Only dev
// mode and tests use it: in production the identity provider signs.
type Signer struct {
	key *rsa.PrivateKey
}

// NewSigner generates a fresh 2048-bit signing key.
func NewSigner() (*Signer, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generate signing key: %w", err)
	}
	return &Signer{key: k}, nil
}

// SignerFromPEM loads a PKCS#1 or PKCS#8 RSA private key.
func SignerFromPEM(b []byte) (*Signer, error) {
	k, err := jwt.ParseRSAPrivateKeyFromPEM(b)
	if err != nil {
		return nil, fmt.Errorf("parse signing key: %w", err)
	}
	return &Signer{key: k}, nil
}

// PrivatePEM encodes the signing key for storage.
func (s *Signer) PrivatePEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(s.key)})
}

// PublicPEM encodes the verification key (what CLERK_JWT_KEY holds).
func (s *Signer) PublicPEM() []byte {
	der, _ := x509.MarshalPKIXPublicKey(&s.key.PublicKey)
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// DevIssuer is the iss of the tokens a Signer mints.
const DevIssuer = "expd-dev"

// Verifier trusts this signer's key and checks the dev issuer.
func (s *Signer) Verifier() *Verifier {
	return NewKeyVerifier(&s.key.PublicKey).WithChecks(Checks{Issuer: DevIssuer})
}

// TokenOptions are the claims of a minted token beyond the session, for
// tests of the claim checks: Issuer ("" : DevIssuer), Audience and AZP
// (empty: absent).
type TokenOptions struct {
	Issuer   string
	Audience []string
	AZP      string
}

// Sign mints a token for sess that expires after ttl.
func (s *Signer) Sign(sess Session, ttl time.Duration) (string, error) {
	return s.SignWith(sess, ttl, TokenOptions{})
}

// SignWith mints a token for sess that expires after ttl, with o's claims.
func (s *Signer) SignWith(sess Session, ttl time.Duration, o TokenOptions) (string, error) {
	now := time.Now()
	iss := o.Issuer
	if iss == "" {
		iss = DevIssuer
	}
	c := sessionClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   sess.UserID,
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now.Add(-time.Minute)),
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
			Issuer:    iss,
			Audience:  o.Audience,
		},
		OrgID: sess.OrgID, OrgRole: sess.Role, OrgSlug: sess.OrgSlug, AZP: o.AZP,
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodRS256, c).SignedString(s.key)
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	return tok, nil
}
