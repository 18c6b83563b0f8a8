package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/datatypes"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// The outbox (table outbound_events): every announcement of a change is
// written in the transaction of the change (Enqueue), so the change and
// the promise to announce it commit together. Whoever committed then
// starts its delivery (workflowclient.Starter.AnnounceQueued, or the workflow
// that made the change) and a row counts as sent once a DeliverEvent
// workflow under its event id exists; rows still pending, because
// Temporal was unreachable or the process died between the commit and
// the start, are delivered by the periodic reconcile (workflows.Redrive).
// The delivery's workflow id is the event id, so delivering a row twice
// starts one delivery. docs/webhooks.md, "The outbox".

// KeepSent is how long a sent row is kept (for support: "was this
// announced, and when?") before Redrive purges it.
const KeepSent = 7 * 24 * time.Hour

// queued is the table's shape.
type queued struct {
	ID           string `gorm:"primaryKey"`
	OrgID        string
	ExperimentID string
	Type         string
	OccurredAt   time.Time
	Data         datatypes.JSON
	CreatedAt    time.Time
	SentAt       *time.Time
}

func (queued) TableName() string { return "outbound_events" }

// NewEvent builds the event announcing one occurrence of type typ, named
// by key (its id is EventID of the type and key joined by "/": the same
// occurrence always gets the same id, whoever announces it).
func NewEvent(orgID, experimentID, typ string, at time.Time, data any, key ...string) (Event, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("encode %s event: %w", typ, err)
	}
	return Event{ID: EventID(strings.Join(append([]string{typ}, key...), "/")), OrgID: orgID, Type: typ,
		ExperimentID: experimentID, OccurredAt: at.UTC().Truncate(time.Millisecond), Data: b}, nil
}

// Check refuses an event that cannot be delivered.
func (ev Event) Check() error {
	switch {
	case ev.ID == "":
		return errors.New("event has no id")
	case ev.OrgID == "":
		return fmt.Errorf("event %s has no org", ev.ID)
	case !KnownType(ev.Type):
		return fmt.Errorf("event %s has unknown type %q", ev.ID, ev.Type)
	}
	return nil
}

// Enqueue writes ev to the outbox inside tx, the transaction of the change
// it announces. An event already queued (same id: a retried action) is
// left as it is.
func Enqueue(ctx context.Context, tx *gorm.DB, ev Event) error {
	if err := ev.Check(); err != nil {
		return err
	}
	data := datatypes.JSON(ev.Data)
	if len(data) == 0 {
		data = datatypes.JSON("{}")
	}
	r := queued{ID: ev.ID, OrgID: ev.OrgID, ExperimentID: ev.ExperimentID, Type: ev.Type, OccurredAt: ev.OccurredAt.UTC(),
		Data: data, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
	if err := tx.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&r).Error; err != nil {
		return fmt.Errorf("queue %s event %s: %w", ev.Type, ev.ID, err)
	}
	return nil
}

// QueueCursor is a position in the pending events (oldest first); the
// zero value is the start.
type QueueCursor struct {
	CreatedAt time.Time
	ID        string
}

// Pending returns up to limit events not yet sent, oldest first, after the
// cursor, and the cursor of the last one.
func Pending(ctx context.Context, db *gorm.DB, after QueueCursor, limit int) ([]Event, QueueCursor, error) {
	q := db.WithContext(ctx).Where("sent_at IS NULL")
	if after.ID != "" {
		q = q.Where("created_at > ? OR (created_at = ? AND id > ?)", after.CreatedAt, after.CreatedAt, after.ID)
	}
	var rows []queued
	if err := q.Order("created_at, id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, after, fmt.Errorf("list pending events: %w", err)
	}
	out := make([]Event, len(rows))
	for i, r := range rows {
		out[i] = Event{ID: r.ID, OrgID: r.OrgID, Type: r.Type, ExperimentID: r.ExperimentID, OccurredAt: r.OccurredAt.UTC(),
			Data: json.RawMessage(r.Data)}
		after = QueueCursor{CreatedAt: r.CreatedAt, ID: r.ID}
	}
	return out, after, nil
}

// MarkSent records that the delivery of each event was started (or found
// started) at.
func MarkSent(ctx context.Context, db *gorm.DB, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	err := db.WithContext(ctx).Model(&queued{}).Where("id IN ? AND sent_at IS NULL", ids).Update("sent_at", at.UTC()).Error
	if err != nil {
		return fmt.Errorf("mark %d events sent: %w", len(ids), err)
	}
	return nil
}

// PurgeSent deletes the rows sent before cutoff and returns how many.
func PurgeSent(ctx context.Context, db *gorm.DB, cutoff time.Time) (int64, error) {
	res := db.WithContext(ctx).Where("sent_at IS NOT NULL AND sent_at < ?", cutoff.UTC()).Delete(&queued{})
	if res.Error != nil {
		return 0, fmt.Errorf("purge sent events: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// QueuedEvent is one outbox row as tests and operators read it.
type QueuedEvent struct {
	Event
	SentAt *time.Time
}

// Queued returns the outbox rows of an org, oldest first.
func Queued(ctx context.Context, db *gorm.DB, orgID string) ([]QueuedEvent, error) {
	var rows []queued
	if err := db.WithContext(ctx).Where("org_id = ?", orgID).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list queued events of %s: %w", orgID, err)
	}
	out := make([]QueuedEvent, len(rows))
	for i, r := range rows {
		out[i] = QueuedEvent{Event: Event{ID: r.ID, OrgID: r.OrgID, Type: r.Type, ExperimentID: r.ExperimentID,
			OccurredAt: r.OccurredAt.UTC(), Data: json.RawMessage(r.Data)}, SentAt: r.SentAt}
	}
	return out, nil
}
