package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/datatypes"
	"gorm.io/gorm"

	"github.com/expd/expd/database"
	"github.com/expd/expd/experiments"
)

// ErrNotFound is returned for an unknown shared metric or version.
var ErrNotFound = errors.New("shared metric not found")

// createAttempts bounds retries when two creates of one name race for the
// same next version.
const createAttempts = 3

// Shared is one stored version of an org-wide metric definition.
type Shared struct {
	experiments.Metric
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

type sharedRow struct {
	OrgID         string `gorm:"primaryKey"`
	Name          string `gorm:"primaryKey"`
	MetricVersion int    `gorm:"primaryKey"`
	Definition    datatypes.JSON
	CreatedBy     string
	CreatedAt     time.Time
}

func (sharedRow) TableName() string { return "shared_metrics" }

func (r sharedRow) shared() (Shared, error) {
	var m experiments.Metric
	if err := json.Unmarshal(r.Definition, &m); err != nil {
		return Shared{}, fmt.Errorf("decode shared metric %s v%d: %w", r.Name, r.MetricVersion, err)
	}
	return Shared{Metric: m, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt}, nil
}

// Store reads and writes an org's shared metric definitions; every method
// is scoped by the org id it is given.
type Store struct{ DB *gorm.DB }

// Create validates m and stores it as the next version of its name (1 for
// a new name). The metric_version the caller sent is replaced: versions
// are minted by the server, like experiment config versions.
func (s Store) Create(ctx context.Context, orgID, actor string, m experiments.Metric) (Shared, error) {
	m.MetricVersion = max(m.MetricVersion, 1)
	if err := Validate(m); err != nil {
		return Shared{}, err
	}
	shared := true
	m.SharedOrgWide = &shared
	for attempt := 1; ; attempt++ {
		out, err := s.insertNext(ctx, orgID, actor, m)
		if !database.IsUniqueViolation(err) || attempt == createAttempts {
			return out, err
		}
	}
}

func (s Store) insertNext(ctx context.Context, orgID, actor string, m experiments.Metric) (Shared, error) {
	var latest int
	db := s.DB.WithContext(ctx)
	if err := db.Model(&sharedRow{}).Select("COALESCE(MAX(metric_version), 0)").
		Where("org_id = ? AND name = ?", orgID, m.Name).Scan(&latest).Error; err != nil {
		return Shared{}, fmt.Errorf("read latest version of shared metric %q: %w", m.Name, err)
	}
	m.MetricVersion = latest + 1
	def, err := json.Marshal(m)
	if err != nil {
		return Shared{}, fmt.Errorf("encode shared metric: %w", err)
	}
	row := sharedRow{OrgID: orgID, Name: m.Name, MetricVersion: m.MetricVersion, Definition: def, CreatedBy: actor, CreatedAt: time.Now().UTC()}
	if err := db.Create(&row).Error; err != nil {
		return Shared{}, fmt.Errorf("insert shared metric %q v%d: %w", m.Name, m.MetricVersion, err)
	}
	return Shared{Metric: m, CreatedBy: actor, CreatedAt: row.CreatedAt}, nil
}

// List returns every stored version, by name, newest version first.
func (s Store) List(ctx context.Context, orgID string) ([]Shared, error) {
	var rows []sharedRow
	if err := s.DB.WithContext(ctx).Where("org_id = ?", orgID).Order("name, metric_version DESC").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list shared metrics: %w", err)
	}
	out := make([]Shared, 0, len(rows))
	for _, r := range rows {
		sh, err := r.shared()
		if err != nil {
			return nil, err
		}
		out = append(out, sh)
	}
	return out, nil
}

// Get returns one version of a shared metric.
func (s Store) Get(ctx context.Context, orgID, name string, version int) (experiments.Metric, error) {
	var row sharedRow
	err := s.DB.WithContext(ctx).Where("org_id = ? AND name = ? AND metric_version = ?", orgID, name, version).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return experiments.Metric{}, fmt.Errorf("%w: %s version %d", ErrNotFound, name, version)
	}
	if err != nil {
		return experiments.Metric{}, fmt.Errorf("get shared metric %s v%d: %w", name, version, err)
	}
	sh, err := row.shared()
	return sh.Metric, err
}
