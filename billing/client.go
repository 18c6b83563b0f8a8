package billing

import (
	"errors"
	"net/http"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/client"
)

// ErrNotConfigured is returned by calls that need the Stripe API when
// billing is not configured on this environment.
var ErrNotConfigured = errors.New("billing is not configured on this environment")

// maxNetworkRetries is stripe-go's own retry of failed connections and 409/5xx
// answers; activities add Temporal's retries on top.
const maxNetworkRetries = 2

// Client is the adapter. A nil *Client is valid and behaves as an
// unconfigured one, so deployments without billing need no special case.
type Client struct {
	cfg Config
	api *client.API // nil when billing is not configured
}

// New builds the adapter for cfg.
func New(cfg Config) *Client {
	c := &Client{cfg: cfg}
	if !cfg.configured() {
		return c
	}
	backendCfg := &stripe.BackendConfig{
		HTTPClient:        cfg.HTTPClient,
		MaxNetworkRetries: stripe.Int64(maxNetworkRetries),
		// stripe-go logs every request at info level by default.
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelWarn},
	}
	if cfg.APIBase != "" {
		backendCfg.URL = stripe.String(cfg.APIBase)
	}
	backend := stripe.GetBackendWithConfig(stripe.APIBackend, backendCfg)
	c.api = client.New(cfg.SecretKey, &stripe.Backends{API: backend, Connect: backend, Uploads: backend})
	return c
}

// Configured tells whether checkout, portal and subscription reads work.
func (c *Client) Configured() bool { return c != nil && c.api != nil }

// Permanent tells whether err is Stripe refusing the request itself (a
// 4xx other than a conflict or rate limit), which no retry can fix.
func Permanent(err error) bool {
	var se *stripe.Error
	if !errors.As(err, &se) {
		return errors.Is(err, ErrNotConfigured)
	}
	return se.HTTPStatusCode >= 400 && se.HTTPStatusCode < 500 &&
		se.HTTPStatusCode != http.StatusConflict && se.HTTPStatusCode != http.StatusTooManyRequests
}
