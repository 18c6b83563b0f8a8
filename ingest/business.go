package ingest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	svix "github.com/svix/svix-webhooks/go"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/expd/expd/secrets"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/vocab"
)

// ErrNoSigningSecret is returned for an org without a business-event secret.
var ErrNoSigningSecret = errors.New("no business-event signing secret")

// SigningSecret is an org's business-event signing secret as issued
// (Secret in clear: shown once, never stored so).
type SigningSecret struct {
	OrgID     string
	Secret    string
	CreatedAt time.Time
}

// signingSecretRow is the table's shape: Secret is sealed (package
// secrets) under EXPD_SECRETS_KEY, bound to signingSecretOwner.
type signingSecretRow struct {
	OrgID     string `gorm:"primaryKey"`
	Secret    string
	CreatedAt time.Time
}

// TableName names the table of migration 0004.
func (signingSecretRow) TableName() string { return "business_event_secrets" }

// signingSecretOwner is the additional data an org's secret is sealed
// with: the table's name and the row's key, so a sealed value copied to
// another org's row, or to another table's, does not open.
func signingSecretOwner(orgID string) string { return "business_event_secrets/" + orgID }

// RotateSigningSecret issues a new Standard Webhooks secret
// ("whsec_" + base64 of 32 random bytes) for the org, replacing the
// previous one at once, and stores it sealed under keys (without a key:
// secrets.ErrNoKey, nothing stored).
func RotateSigningSecret(ctx context.Context, db *gorm.DB, keys *secrets.Keyring, orgID string, now time.Time) (SigningSecret, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return SigningSecret{}, fmt.Errorf("generate signing secret: %w", err)
	}
	s := SigningSecret{OrgID: orgID, Secret: "whsec_" + base64.StdEncoding.EncodeToString(b[:]), CreatedAt: now.UTC()}
	sealed, err := keys.Seal(s.Secret, signingSecretOwner(orgID))
	if err != nil {
		return SigningSecret{}, fmt.Errorf("seal signing secret: %w", err)
	}
	err = db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "org_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"secret", "created_at"}),
	}).Create(&signingSecretRow{OrgID: orgID, Secret: sealed, CreatedAt: s.CreatedAt}).Error
	if err != nil {
		return SigningSecret{}, fmt.Errorf("store signing secret: %w", err)
	}
	return s, nil
}

// SigningSecrets is the column of sealed secrets `expd migrate` seals
// and, during a rotation, seals again (secrets.Keyring.ResealColumn).
var SigningSecrets = secrets.Column{Table: "business_event_secrets", Key: "org_id", Secret: "secret", Owner: signingSecretOwner}

// VerifyBusinessEvent checks a Standard Webhooks signature (webhook-id,
// webhook-timestamp, webhook-signature; 5-minute tolerance) of payload
// with the org's secret. Any failure, a missing secret included, is an
// error to answer with 401.
func VerifyBusinessEvent(ctx context.Context, db *gorm.DB, keys *secrets.Keyring, orgID string, payload []byte, h http.Header) error {
	var s signingSecretRow
	err := db.WithContext(ctx).Where("org_id = ?", orgID).Limit(1).Find(&s).Error
	if err != nil {
		return fmt.Errorf("read signing secret: %w", err)
	}
	if s.Secret == "" {
		return ErrNoSigningSecret
	}
	secret, err := keys.OpenStored(s.Secret, signingSecretOwner(orgID))
	if err != nil {
		return fmt.Errorf("open the signing secret of org %s: %w", orgID, err)
	}
	wh, err := svix.NewWebhook(secret)
	if err != nil {
		return fmt.Errorf("signing secret of org %s: %w", orgID, err)
	}
	if err := wh.Verify(payload, h); err != nil {
		return &SignatureError{Err: err}
	}
	return nil
}

// SignatureError is a bad, missing or stale signature.
type SignatureError struct{ Err error }

func (e *SignatureError) Error() string { return "webhook signature: " + e.Err.Error() }

// BusinessEvent builds the event of a verified business-event webhook:
// its id is webhook-id, so a redelivery is stored once, and its time is
// the payload's timestamp or else webhook-timestamp.
func BusinessEvent(payload []byte, h http.Header) (Event, error) {
	ev, err := Decode(payload)
	if err != nil {
		return ev, err
	}
	id := h.Get("webhook-id")
	var errs validate.Errors
	if ev.EventID != "" && ev.EventID != id {
		errs.Add("event_id", "must be absent or equal to the webhook-id header")
	}
	if ev.Type != "" && ev.Type != vocab.TypeBusinessEvent {
		errs.Add("type", "must be absent or %q", vocab.TypeBusinessEvent)
	}
	ev.EventID, ev.Type = id, vocab.TypeBusinessEvent
	if ev.Timestamp == "" {
		if sec, err := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64); err == nil {
			ev.Timestamp = time.Unix(sec, 0).UTC().Format(time.RFC3339)
		}
	}
	return ev, errs.Err()
}
