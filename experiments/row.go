package experiments

import (
	"time"

	"gorm.io/datatypes"
)

// Row is the mutable head of an experiment: its identity, frozen
// bucketing inputs and the number of its latest config version. The config
// itself lives in VersionRow rows, which are never updated.
type Row struct {
	ID             string `gorm:"primaryKey;type:uuid"`
	OrgID          string `gorm:"type:uuid"`
	Name           string
	Status         string
	Salt           string
	BucketCount    uint32
	CurrentVersion int
	// LayerID is the layer the experiment holds a range of (nil: none);
	// set at creation only.
	LayerID   *string `gorm:"type:uuid"`
	CreatedAt time.Time
	UpdatedAt time.Time
	ShippedAt *time.Time // set once, by the ship transition
	// SignalPendingSince: the lifecycle workflow is owed a signal (it has a
	// scheduled step to arm) since then; nil when nothing is owed.
	SignalPendingSince *time.Time
	// LastHealthCheckedAt: the last hourly guardrail health check (the
	// rotation's key; nil: never, ranked as checked at creation).
	LastHealthCheckedAt *time.Time
}

// VersionRow is one immutable config version. Config holds the
// ExperimentConfig as sent (allocation, variants, metrics, control) and
// BucketMap the bucket ranges computed for it.
type VersionRow struct {
	ID           string `gorm:"primaryKey;type:uuid"`
	ExperimentID string `gorm:"type:uuid"`
	OrgID        string `gorm:"type:uuid"`
	Version      int
	Config       datatypes.JSON
	BucketMap    datatypes.JSON
	CreatedBy    string
	CreatedAt    time.Time
}

// TableName: Experiment is the API view; this is the experiments row.
func (Row) TableName() string { return "experiments" }

// TableName names the table of the config versions.
func (VersionRow) TableName() string { return "experiment_versions" }
