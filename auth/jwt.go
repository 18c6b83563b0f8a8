package auth

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"
)

// Verifier checks identity-provider session JWTs: RS256 only, signature,
// expiry and not-before (with a small leeway for clock skew).
type Verifier struct {
	keyFunc jwt.Keyfunc
	parser  *jwt.Parser
	parties []string // allowed azp values (then required); empty: not checked
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

// NewJWKSVerifier trusts the keys published at url (CLERK_JWKS_URL),
// through keyfunc: the set is refreshed in the background every hour until
// ctx ends, no lock is held across a fetch, and a token naming an unknown
// kid (a rotation) triggers a refetch at most once a minute; past that
// limit such a token is refused at once instead of waiting.
func NewJWKSVerifier(ctx context.Context, url string, client *http.Client) (*Verifier, error) {
	kf, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{url}, keyfunc.Override{
		Client:            client,
		HTTPTimeout:       5 * time.Second,
		RefreshInterval:   time.Hour,
		RefreshUnknownKID: rate.NewLimiter(rate.Every(time.Minute), 1),
		RateLimitWaitMax:  time.Second, // the refill is a minute away, so past the limit Wait fails at once
	})
	if err != nil {
		return nil, fmt.Errorf("identity JWKS %s: %w", url, err)
	}
	return newVerifier(kf.Keyfunc), nil
}

// Checks are the claim checks of session tokens beyond signature and
// expiry, as the identity provider's documentation asks of a backend
// (iss always, azp against the app's origins, aud when one is set).
type Checks struct {
	// Issuer (CLERK_ISSUER; `expd dev`: DevIssuer) must equal the token's
	// iss: a token of another identity-provider instance signed with a
	// shared key is refused. Required outside dev (cmd/expd).
	Issuer string
	// Audience (CLERK_AUDIENCE), when set, must be among the token's aud.
	Audience string
	// AuthorizedParties (EXPD_DASHBOARD_ORIGINS), when set, must contain
	// the token's azp (the origin that obtained it); a token without azp
	// is then refused.
	AuthorizedParties []string
}

// WithChecks returns a verifier that also applies c.
func (v *Verifier) WithChecks(c Checks) *Verifier {
	opts := []jwt.ParserOption{jwt.WithValidMethods([]string{"RS256"}), jwt.WithExpirationRequired(), jwt.WithLeeway(clockLeeway)}
	if c.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(c.Issuer))
	}
	if c.Audience != "" {
		opts = append(opts, jwt.WithAudience(c.Audience))
	}
	return &Verifier{keyFunc: v.keyFunc, parser: jwt.NewParser(opts...), parties: c.AuthorizedParties}
}

// Verify returns the session of a valid token.
func (v *Verifier) Verify(token string) (Session, error) {
	var c sessionClaims
	if _, err := v.parser.ParseWithClaims(token, &c, v.keyFunc); err != nil {
		return Session{}, fmt.Errorf("identity token: %w", err)
	}
	switch {
	case len(v.parties) == 0:
	case c.AZP == "":
		return Session{}, errors.New("identity token: no azp, and the allowed dashboard origins are configured")
	case !slices.Contains(v.parties, c.AZP):
		return Session{}, fmt.Errorf("identity token: azp %q is not an allowed dashboard origin", c.AZP)
	}
	return c.session()
}
