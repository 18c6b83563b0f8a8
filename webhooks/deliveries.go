package webhooks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/expd/expd/internal/pagecursor"
)

// MaxErrorLen bounds the error text kept for an attempt.
const MaxErrorLen = 500

// delivery is the table's shape: one attempt.
type delivery struct {
	ID          string `gorm:"primaryKey"`
	OrgID       string
	EndpointID  string
	EventID     string
	EventType   string
	Attempt     int
	StatusCode  int
	Error       string
	DurationMs  int64
	AttemptedAt time.Time
}

func (delivery) TableName() string { return "webhook_deliveries" }

// AttemptRecord is one attempt to record.
type AttemptRecord struct {
	OrgID      string
	EndpointID string
	EventID    string
	EventType  string
	Attempt    int
	StatusCode int
	Error      string
	Duration   time.Duration
	At         time.Time
}

// RecordAttempt stores one attempt; recording the same attempt of the same
// event and endpoint again changes nothing.
func RecordAttempt(ctx context.Context, db *gorm.DB, a AttemptRecord) error {
	msg := a.Error
	if len(msg) > MaxErrorLen {
		msg = msg[:MaxErrorLen]
	}
	msg = strings.ToValidUTF8(strings.ReplaceAll(msg, "\x00", ""), "")
	r := delivery{ID: uuid.NewString(), OrgID: a.OrgID, EndpointID: a.EndpointID, EventID: a.EventID, EventType: a.EventType,
		Attempt: a.Attempt, StatusCode: a.StatusCode, Error: msg, DurationMs: a.Duration.Milliseconds(),
		AttemptedAt: a.At.UTC().Truncate(time.Microsecond)}
	err := db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&r).Error
	if err != nil {
		return fmt.Errorf("record delivery attempt %d of %s to %s: %w", a.Attempt, a.EventID, a.EndpointID, err)
	}
	return nil
}

// Delivery is one attempt as GET /v1/webhook-endpoints/{id}/deliveries
// shows it.
type Delivery struct {
	ID          string    `json:"id"`
	EventID     string    `json:"event_id"`
	EventType   string    `json:"event_type"`
	Attempt     int       `json:"attempt"`
	StatusCode  int       `json:"status_code,omitempty"`
	Succeeded   bool      `json:"succeeded"`
	Error       string    `json:"error,omitempty"`
	DurationMs  int64     `json:"duration_ms"`
	AttemptedAt time.Time `json:"attempted_at"`
}

// DeliveryPage is one page of attempts, newest first; Next is "" on the
// last page.
type DeliveryPage struct {
	Deliveries []Delivery `json:"deliveries"`
	Next       string     `json:"next_cursor,omitempty"`
}

// ErrBadCursor is returned for a cursor this package did not issue.
var ErrBadCursor = pagecursor.ErrInvalid

// ListDeliveries returns one page of the attempts to one of the org's
// endpoints (deleted endpoints included: their record stays readable),
// newest first.
func ListDeliveries(ctx context.Context, db *gorm.DB, orgID, endpointID, cursor string, limit int) (DeliveryPage, error) {
	if _, err := find(ctx, db, orgID, endpointID, true); err != nil {
		return DeliveryPage{}, err
	}
	q := db.WithContext(ctx).Where("endpoint_id = ? AND org_id = ?", endpointID, orgID)
	if cursor != "" {
		at, id, err := pagecursor.Decode(cursor)
		if err != nil {
			return DeliveryPage{}, err
		}
		q = q.Where("attempted_at < ? OR (attempted_at = ? AND id < ?)", at, at, id)
	}
	var rows []delivery
	if err := q.Order("attempted_at DESC, id DESC").Limit(limit + 1).Find(&rows).Error; err != nil {
		return DeliveryPage{}, fmt.Errorf("list deliveries of %s: %w", endpointID, err)
	}
	page := DeliveryPage{Deliveries: make([]Delivery, 0, min(len(rows), limit))}
	for i, r := range rows {
		if i == limit {
			last := rows[i-1]
			page.Next = pagecursor.Encode(last.AttemptedAt, last.ID)
			break
		}
		page.Deliveries = append(page.Deliveries, Delivery{ID: r.ID, EventID: r.EventID, EventType: r.EventType, Attempt: r.Attempt,
			StatusCode: r.StatusCode, Succeeded: r.Error == "" && r.StatusCode >= 200 && r.StatusCode < 300, Error: r.Error,
			DurationMs: r.DurationMs, AttemptedAt: r.AttemptedAt.UTC()})
	}
	return page, nil
}
