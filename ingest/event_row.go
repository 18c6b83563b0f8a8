package ingest

import (
	"time"

	"github.com/expd/expd/vocab"
)

// EventRow is one row of the events table: an exposure, a model call or a
// business event. Per-type fields are nil where they do not apply. The
// primary key (org_id, event_id) makes retries and replays idempotent.
type EventRow struct {
	OrgID           string `gorm:"primaryKey;type:uuid"`
	EventID         string `gorm:"primaryKey"`
	Type            vocab.RecordType
	ExperimentID    string `gorm:"type:uuid"`
	UserID          string
	Variant         string
	Ts              time.Time
	ReceivedAt      time.Time
	ConfigVersion   *int64
	vocab.ModelCall `gorm:"embedded"` // the model-call fields (vocab.ModelCallFields)
	BusinessMetric  *string
	Value           *float64
	Source          string
}

// TableName: the struct is named apart from Event, the wire form.
func (EventRow) TableName() string { return "events" }
