package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"gorm.io/datatypes"
	"gorm.io/gorm"

	"github.com/expd/expd/audit"
	"github.com/expd/expd/secrets"
)

// MaxEndpoints bounds the live endpoints of one org.
const MaxEndpoints = 20

// ErrNotFound is returned for an endpoint the org does not have (or that
// was deleted).
var ErrNotFound = errors.New("webhook endpoint not found")

// ErrTooManyEndpoints is returned when the org already has MaxEndpoints.
var ErrTooManyEndpoints = fmt.Errorf("an org has at most %d webhook endpoints", MaxEndpoints)

// endpoint is the table's shape. Secret is sealed (package secrets) under
// EXPD_SECRETS_KEY, bound to secretOwner; in clear it leaves this package
// only through Create's answer and Target (the delivery activity).
type endpoint struct {
	ID          string `gorm:"primaryKey"`
	OrgID       string
	URL         string `gorm:"column:url"`
	Description string
	EventTypes  datatypes.JSON
	Secret      string
	CreatedBy   string
	CreatedAt   time.Time
	DeletedAt   *time.Time
	// DisabledAt is set when the receiver answered 410 Gone (Disable).
	DisabledAt     *time.Time
	DisabledReason string
}

func (endpoint) TableName() string { return "webhook_endpoints" }

// Endpoint is a registered endpoint as the API shows it (no secret).
// EventTypes empty means every event type.
type Endpoint struct {
	ID          string    `json:"id"`
	URL         string    `json:"url"`
	Description string    `json:"description,omitempty"`
	EventTypes  []string  `json:"event_types"`
	CreatedAt   time.Time `json:"created_at"`
	// DisabledAt and DisabledReason say when and why expd stopped
	// delivering to the endpoint (its receiver answered 410 Gone); absent
	// while it is enabled.
	DisabledAt     *time.Time `json:"disabled_at,omitempty"`
	DisabledReason string     `json:"disabled_reason,omitempty"`
}

func (e endpoint) view() Endpoint {
	v := Endpoint{ID: e.ID, URL: e.URL, Description: e.Description, EventTypes: []string{}, CreatedAt: e.CreatedAt.UTC(),
		DisabledReason: e.DisabledReason}
	if e.DisabledAt != nil {
		at := e.DisabledAt.UTC()
		v.DisabledAt = &at
	}
	if len(e.EventTypes) > 0 {
		_ = json.Unmarshal(e.EventTypes, &v.EventTypes) // written by Create only
	}
	return v
}

// subscribed tells whether the endpoint takes events of type t.
func (e endpoint) subscribed(t string) bool {
	types := e.view().EventTypes
	return len(types) == 0 || slices.Contains(types, t)
}

// NewEndpoint is a validated registration (the API validates URL with
// CheckURL and the types with KnownType).
type NewEndpoint struct {
	URL         string
	Description string
	EventTypes  []string // nil or empty: every type
	Actor       string   // user id of the admin
}

// Created is a new endpoint with its signing secret, shown once.
type Created struct {
	Endpoint
	Secret string `json:"secret"`
}

// NewSecret returns a Standard Webhooks secret: "whsec_" + base64 of 32
// random bytes.
func NewSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate webhook secret: %w", err)
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b[:]), nil
}

// secretOwner is the additional data an endpoint's secret is sealed
// with: the table's name and the row's id, so a sealed value copied to
// another row, or to another table's, does not open.
func secretOwner(id string) string { return "webhook_endpoints/" + id }

// Create registers an endpoint with a new secret, stored sealed under
// keys (without a key: secrets.ErrNoKey, nothing stored), and records
// webhook_endpoint.created in the same transaction.
func Create(ctx context.Context, db *gorm.DB, keys *secrets.Keyring, orgID string, in NewEndpoint, now time.Time) (Created, error) {
	secret, err := NewSecret()
	if err != nil {
		return Created{}, err
	}
	id := uuid.NewString()
	sealed, err := keys.Seal(secret, secretOwner(id))
	if err != nil {
		return Created{}, fmt.Errorf("seal webhook secret: %w", err)
	}
	types := in.EventTypes
	if types == nil {
		types = []string{}
	}
	typesJSON, err := json.Marshal(types)
	if err != nil {
		return Created{}, fmt.Errorf("encode event types: %w", err)
	}
	row := endpoint{ID: id, OrgID: orgID, URL: in.URL, Description: in.Description, EventTypes: typesJSON,
		Secret: sealed, CreatedBy: in.Actor, CreatedAt: now.UTC().Truncate(time.Microsecond)}
	err = db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var live int64
		if err := tx.Model(&endpoint{}).Where("org_id = ? AND deleted_at IS NULL", orgID).Count(&live).Error; err != nil {
			return fmt.Errorf("count webhook endpoints: %w", err)
		}
		if live >= MaxEndpoints {
			return ErrTooManyEndpoints
		}
		if err := tx.Create(&row).Error; err != nil {
			return fmt.Errorf("store webhook endpoint: %w", err)
		}
		v := row.view()
		return audit.Record(ctx, tx, audit.Entry{OrgID: orgID, Action: audit.WebhookEndpointCreated, Actor: in.Actor,
			Summary: "webhook endpoint " + v.ID + " created for " + v.URL, After: v, At: row.CreatedAt})
	})
	if err != nil {
		return Created{}, err
	}
	return Created{Endpoint: row.view(), Secret: secret}, nil
}

// List returns the org's live endpoints, oldest first.
func List(ctx context.Context, db *gorm.DB, orgID string) ([]Endpoint, error) {
	var rows []endpoint
	err := db.WithContext(ctx).Where("org_id = ? AND deleted_at IS NULL", orgID).Order("created_at, id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	out := make([]Endpoint, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.view())
	}
	return out, nil
}

// find reads one endpoint of the org, deleted ones included when
// withDeleted. A malformed id is simply not found.
func find(ctx context.Context, db *gorm.DB, orgID, id string, withDeleted bool) (endpoint, error) {
	var r endpoint
	if uuid.Validate(id) != nil {
		return r, ErrNotFound
	}
	q := db.WithContext(ctx).Where("id = ? AND org_id = ?", id, orgID)
	if !withDeleted {
		q = q.Where("deleted_at IS NULL")
	}
	if err := q.Limit(1).Find(&r).Error; err != nil {
		return r, fmt.Errorf("read webhook endpoint %s: %w", id, err)
	}
	if r.ID == "" {
		return r, ErrNotFound
	}
	return r, nil
}

// Get returns one live endpoint of the org.
func Get(ctx context.Context, db *gorm.DB, orgID, id string) (Endpoint, error) {
	r, err := find(ctx, db, orgID, id, false)
	if err != nil {
		return Endpoint{}, err
	}
	return r.view(), nil
}

// Delete stops deliveries to the endpoint (deliveries already under way
// find it deleted at their next attempt and stop) and records
// webhook_endpoint.deleted in the same transaction. Its delivery record
// stays readable. Deleting a deleted or unknown endpoint is ErrNotFound.
func Delete(ctx context.Context, db *gorm.DB, orgID, id, actor string, now time.Time) error {
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r, err := find(ctx, tx, orgID, id, false)
		if err != nil {
			return err
		}
		at := now.UTC().Truncate(time.Microsecond)
		res := tx.Model(&endpoint{}).Where("id = ? AND deleted_at IS NULL", id).Update("deleted_at", at)
		if res.Error != nil {
			return fmt.Errorf("delete webhook endpoint %s: %w", id, res.Error)
		}
		if res.RowsAffected == 0 {
			return ErrNotFound // deleted concurrently
		}
		return audit.Record(ctx, tx, audit.Entry{OrgID: orgID, Action: audit.WebhookEndpointDeleted, Actor: actor,
			Summary: "webhook endpoint " + id + " deleted (" + r.URL + ")", Before: r.view(), At: at})
	})
}

// Disable stops deliveries to an endpoint whose receiver answered 410
// Gone, as actor system from the delivering workflow, and records
// webhook_endpoint.disabled in the same transaction. It tells whether this
// call disabled it (false: already disabled or deleted).
func Disable(ctx context.Context, db *gorm.DB, id, reason, workflowID string, now time.Time) (bool, error) {
	var disabled bool
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var r endpoint
		if err := tx.Where("id = ?", id).Limit(1).Find(&r).Error; err != nil {
			return fmt.Errorf("read webhook endpoint %s: %w", id, err)
		}
		if r.ID == "" || r.DeletedAt != nil || r.DisabledAt != nil {
			return nil
		}
		at := now.UTC().Truncate(time.Microsecond)
		res := tx.Model(&endpoint{}).Where("id = ? AND disabled_at IS NULL AND deleted_at IS NULL", id).
			Updates(map[string]any{"disabled_at": at, "disabled_reason": reason})
		if res.Error != nil {
			return fmt.Errorf("disable webhook endpoint %s: %w", id, res.Error)
		}
		if res.RowsAffected == 0 {
			return nil // disabled or deleted concurrently
		}
		before := r.view()
		r.DisabledAt, r.DisabledReason = &at, reason
		disabled = true
		return audit.Record(ctx, tx, audit.Entry{OrgID: r.OrgID, Action: audit.WebhookEndpointDisabled, Actor: audit.SystemActor,
			WorkflowID: workflowID, Summary: "webhook endpoint " + id + " disabled: " + reason, Before: before, After: r.view(),
			DedupKey: "webhook-endpoint-disabled/" + id, At: at})
	})
	return disabled, err
}

// Subscribers returns the ids of the org's live endpoints that take events
// of type t, oldest first (deleted and disabled endpoints take none).
func Subscribers(ctx context.Context, db *gorm.DB, orgID, t string) ([]string, error) {
	var rows []endpoint
	err := db.WithContext(ctx).Select("id", "event_types", "created_at").
		Where("org_id = ? AND deleted_at IS NULL AND disabled_at IS NULL", orgID).Order("created_at, id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list subscribers of %s: %w", t, err)
	}
	ids := []string{}
	for _, r := range rows {
		if r.subscribed(t) {
			ids = append(ids, r.ID)
		}
	}
	return ids, nil
}

// Target is what a delivery needs: where and with which secret. Deleted
// is set once the endpoint is deleted, Disabled once it is disabled (the
// delivery then stops).
type Target struct {
	OrgID    string
	URL      string
	Secret   string
	Deleted  bool
	Disabled bool
}

// LoadTarget reads an endpoint for delivery by id alone (the delivery
// activity), so the secret never travels through a workflow, and opens
// its secret with keys.
func LoadTarget(ctx context.Context, db *gorm.DB, keys *secrets.Keyring, id string) (Target, error) {
	var r endpoint
	if err := db.WithContext(ctx).Where("id = ?", id).Limit(1).Find(&r).Error; err != nil {
		return Target{}, fmt.Errorf("read webhook endpoint %s: %w", id, err)
	}
	if r.ID == "" {
		return Target{}, ErrNotFound
	}
	secret, err := keys.OpenStored(r.Secret, secretOwner(r.ID))
	if err != nil {
		return Target{}, fmt.Errorf("open the secret of webhook endpoint %s: %w", id, err)
	}
	return Target{OrgID: r.OrgID, URL: r.URL, Secret: secret, Deleted: r.DeletedAt != nil, Disabled: r.DisabledAt != nil}, nil
}

// Secrets is the column of sealed endpoint secrets (deleted endpoints'
// included) `expd migrate` seals and, during a rotation, seals again
// (secrets.Keyring.ResealColumn).
var Secrets = secrets.Column{Table: "webhook_endpoints", Key: "id", Secret: "secret", Owner: secretOwner}
