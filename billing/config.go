// Package billing is expd's one adapter to the payment provider (Stripe,
// through stripe-go v76): hosted checkout and portal sessions, subscription
// reads, webhook verification and the mapping from prices and subscription
// statuses to plans. It holds no database code; callers store what it tells.
package billing

import (
	"net/http"
	"strings"
)

// Config is billing's environment. Billing is configured only when the
// secret key and both prices are set; otherwise checkout and portal answer
// "not configured" and webhooks are applied from the event alone.
type Config struct {
	SecretKey     string // STRIPE_SECRET_KEY
	WebhookSecret string // STRIPE_WEBHOOK_SECRET (whsec_...)
	PricePro      string // STRIPE_PRICE_PRO
	PriceBusiness string // STRIPE_PRICE_BUSINESS
	APIBase       string // STRIPE_API_BASE; empty: Stripe's own API
	// ReturnOrigins are the origins (scheme://host[:port]) that checkout
	// and portal may send the browser back to (EXPD_DASHBOARD_ORIGINS).
	ReturnOrigins []string
	// HTTPClient carries the API calls; nil: stripe-go's default client.
	HTTPClient *http.Client
}

// ConfigFromEnv reads Config from getenv (os.Getenv in the binary).
func ConfigFromEnv(getenv func(string) string) Config {
	return Config{
		SecretKey:     strings.TrimSpace(getenv("STRIPE_SECRET_KEY")),
		WebhookSecret: strings.TrimSpace(getenv("STRIPE_WEBHOOK_SECRET")),
		PricePro:      strings.TrimSpace(getenv("STRIPE_PRICE_PRO")),
		PriceBusiness: strings.TrimSpace(getenv("STRIPE_PRICE_BUSINESS")),
		APIBase:       strings.TrimSpace(getenv("STRIPE_API_BASE")),
		ReturnOrigins: splitList(getenv("EXPD_DASHBOARD_ORIGINS")),
	}
}

func (c Config) configured() bool {
	return c.SecretKey != "" && c.PricePro != "" && c.PriceBusiness != ""
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if p := strings.TrimRight(strings.TrimSpace(part), "/"); p != "" {
			out = append(out, p)
		}
	}
	return out
}
