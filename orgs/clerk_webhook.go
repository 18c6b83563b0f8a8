package orgs

import (
	"errors"
	"fmt"
	"net/http"

	svix "github.com/svix/svix-webhooks/go"
)

// Errors of ReadClerkEvent that say the delivery cannot be trusted.
var (
	ErrNoWebhookSecret = errors.New("no identity webhook secret is configured on this server, so no delivery can be verified")
	ErrSignature       = errors.New("missing, invalid or stale svix signature")
)

// MalformedEventError: a correctly signed delivery whose payload cannot be read.
type MalformedEventError struct{ Err error }

func (e *MalformedEventError) Error() string { return e.Err.Error() }
func (e *MalformedEventError) Unwrap() error { return e.Err }

// ReadClerkEvent verifies a Svix-signed identity-provider delivery with
// the webhook secret (whsec_...) and parses it (ParseClerkEvent). Verify
// checks svix-id, svix-timestamp (5 minutes either way) and svix-signature
// against every signature the header lists. Errors: ErrNoWebhookSecret,
// ErrSignature, *MalformedEventError, else a configuration failure.
func ReadClerkEvent(secret string, payload []byte, header http.Header) (ch IdentityChange, handled bool, err error) {
	if secret == "" {
		return ch, false, ErrNoWebhookSecret
	}
	wh, err := svix.NewWebhook(secret)
	if err != nil {
		return ch, false, fmt.Errorf("identity webhook secret: %w", err)
	}
	if err := wh.Verify(payload, header); err != nil {
		return ch, false, ErrSignature
	}
	ch, handled, err = ParseClerkEvent(payload)
	if err != nil {
		return ch, false, &MalformedEventError{Err: err}
	}
	return ch, handled, nil
}
