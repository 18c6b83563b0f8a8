package testenv

import (
	"crypto/rand"
	"encoding/base64"
	"strconv"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v76/webhook"
	svix "github.com/svix/svix-webhooks/go"
)

// WebhookSecret is a fresh Standard Webhooks (Svix) signing secret.
func WebhookSecret(t testing.TB) string {
	t.Helper()
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// SvixHeaders signs payload as Svix does for message id at time at, under
// the svix-* header names (the identity webhook).
func SvixHeaders(t testing.TB, secret, id string, at time.Time, payload []byte) []string {
	t.Helper()
	return signedHeaders(t, "svix-", secret, id, at, payload)
}

// StandardWebhookHeaders is SvixHeaders under the webhook-* names of the
// Standard Webhooks specification (the business-event webhook).
func StandardWebhookHeaders(t testing.TB, secret, id string, at time.Time, payload []byte) []string {
	t.Helper()
	return signedHeaders(t, "webhook-", secret, id, at, payload)
}

func signedHeaders(t testing.TB, prefix, secret, id string, at time.Time, payload []byte) []string {
	t.Helper()
	wh, err := svix.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := wh.Sign(id, at, payload)
	if err != nil {
		t.Fatal(err)
	}
	return []string{prefix + "id", id, prefix + "timestamp", strconv.FormatInt(at.Unix(), 10), prefix + "signature", sig}
}

// PaymentSignature is the payment provider's (Stripe's) t=...,v1=...
// signature of payload, as it would sign it at time at.
func PaymentSignature(payload []byte, secret string, at time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: at}).Header
}

// PaymentHeaders is the header pair of PaymentSignature under the name the
// payment webhook reads first.
func PaymentHeaders(payload []byte, secret string, at time.Time) []string {
	return []string{"Payment-Signature", PaymentSignature(payload, secret, at)}
}
