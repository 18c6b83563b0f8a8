package models

import "time"

// Event is one row of the events table: an exposure, a model call or a
// business event. Per-type fields are nil where they do not apply. The
// primary key (org_id, event_id) makes retries and replays idempotent.
type Event struct {
	OrgID              string `gorm:"primaryKey;type:uuid"`
	EventID            string `gorm:"primaryKey"`
	Type               string
	ExperimentID       string `gorm:"type:uuid"`
	UserID             string
	Variant            string
	Ts                 time.Time
	ReceivedAt         time.Time
	ConfigVersion      *int64
	Model              *string
	LatencyMs          *float64
	InputTokens        *int64
	OutputTokens       *int64
	TotalTokens        *int64
	CostUSD            *float64 `gorm:"column:cost_usd"`
	TimeToFirstTokenMs *float64
	Error              *string
	BusinessMetric     *string
	Value              *float64
	Prompt             *string
	Response           *string
	Source             string
}

// Assignment pins a user to a variant of an experiment.
type Assignment struct {
	OrgID        string `gorm:"type:uuid"`
	ExperimentID string `gorm:"primaryKey;type:uuid"`
	UserID       string `gorm:"primaryKey"`
	Variant      string
	Source       string
	CreatedAt    time.Time
}
