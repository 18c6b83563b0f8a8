package assignments

import "time"

// Assignment pins a user to a variant of an experiment.
type Assignment struct {
	OrgID        string `gorm:"type:uuid"`
	ExperimentID string `gorm:"primaryKey;type:uuid"`
	UserID       string `gorm:"primaryKey"`
	Variant      string
	Source       string
	CreatedAt    time.Time
}
