// Package holdouts owns the holdouts table: a share of users kept out of
// every experiment in a scope (docs/targeting.md, "Holdouts"), to measure
// what the experiments shipped in it add up to.
package holdouts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/datatypes"
	"gorm.io/gorm"

	"github.com/expd/expd/audit"
	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/database"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/layers"
	"github.com/expd/expd/validate"
)

// ErrNotFound: no such holdout in the org.
var ErrNotFound = errors.New("holdout not found")

// ErrNameTaken: the org has a holdout of that name.
var ErrNameTaken = errors.New("holdout name already in use in this org")

// Bounds of a holdout.
const (
	// BucketCount is every holdout's bucket space: percents to 0.01.
	BucketCount = 10_000
	// MaxPercent: holding out more than half of the users is no longer a
	// holdout; the experiments would measure the minority.
	MaxPercent        = 50
	MaxDescriptionLen = 2_000
)

// Spec is a holdout as POST and PUT take it.
type Spec struct {
	Name        string               `json:"name"`
	Description string               `json:"description,omitempty"`
	Salt        string               `json:"salt"`
	Percent     *float64             `json:"percent"`
	LayerID     *string              `json:"layer_id,omitempty"`
	Metrics     []experiments.Metric `json:"metrics"`
}

// Holdout is a stored holdout.
type Holdout struct {
	ID          string               `json:"id"`
	Name        string               `json:"name"`
	Description string               `json:"description"`
	Salt        string               `json:"salt"`
	BucketCount uint32               `json:"bucket_count"`
	Percent     float64              `json:"percent"`
	LayerID     *string              `json:"layer_id"`
	Metrics     []experiments.Metric `json:"metrics"`
	CreatedAt   time.Time            `json:"created_at"`
	UpdatedAt   time.Time            `json:"updated_at"`
}

// Slot is the held-out part of the holdout's bucket space: users whose
// bucket in it is below End are held out.
func (h *Holdout) Slot() bucketing.Slot {
	return bucketing.Slot{ID: h.ID, Salt: h.Salt, BucketCount: h.BucketCount, End: bucketing.BucketOfFraction(h.Percent/100, h.BucketCount)}
}

// Covers tells whether an experiment of layer layerID ("" when none) is in
// the holdout's scope.
func (h *Holdout) Covers(layerID string) bool {
	return h.LayerID == nil || *h.LayerID == layerID
}

type row struct {
	ID          string `gorm:"primaryKey;type:uuid"`
	OrgID       string `gorm:"type:uuid"`
	Name        string
	Description string
	Salt        string
	BucketCount uint32
	Percent     float64
	LayerID     *string `gorm:"type:uuid"`
	Metrics     datatypes.JSON
	CreatedBy   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

func (row) TableName() string { return "holdouts" }

func (r row) holdout() (Holdout, error) {
	h := Holdout{ID: r.ID, Name: r.Name, Description: r.Description, Salt: r.Salt, BucketCount: r.BucketCount,
		Percent: r.Percent, LayerID: r.LayerID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if err := json.Unmarshal(r.Metrics, &h.Metrics); err != nil {
		return h, fmt.Errorf("decode metrics of holdout %s: %w", r.ID, err)
	}
	return h, nil
}

// validate checks a spec; the layer's existence is checked by the store.
func (s *Spec) validate() error {
	var errs validate.Errors
	if s.Name == "" {
		errs.Add("name", "is required")
	} else {
		errs.Name("name", s.Name)
	}
	errs.Text("description", s.Description, MaxDescriptionLen, false)
	errs.Salt("salt", s.Salt)
	switch {
	case s.Percent == nil:
		errs.Add("percent", "is required: 0 < percent <= %d", MaxPercent)
	case !(*s.Percent > 0 && *s.Percent <= MaxPercent):
		errs.Add("percent", "must satisfy 0 < percent <= %d; got %g", MaxPercent, *s.Percent)
	case bucketing.BucketOfFraction(*s.Percent/100, BucketCount) == 0:
		errs.Add("percent", "holds out no bucket of %d: at least 0.005", BucketCount)
	}
	if s.LayerID != nil && uuid.Validate(*s.LayerID) != nil {
		errs.Add("layer_id", "must be the id of one of the org's layers")
	}
	if s.Metrics == nil {
		errs.Add("metrics", "is required (an empty list is allowed)")
	} else {
		for _, fe := range validate.Fields(experiments.ValidateMetrics(s.Metrics)) {
			errs.Add(fe.Field, "%s", fe.Reason)
		}
	}
	return errs.Err()
}

// Store reads and writes holdouts; every method is scoped by org. A
// change mints a config version: the config carries the holdouts.
type Store struct{ DB *gorm.DB }

// Create stores a new holdout.
func (s Store) Create(ctx context.Context, orgID, actor string, spec Spec, now time.Time) (Holdout, error) {
	if err := spec.validate(); err != nil {
		return Holdout{}, err
	}
	metrics, err := json.Marshal(spec.Metrics)
	if err != nil {
		return Holdout{}, fmt.Errorf("encode metrics: %w", err)
	}
	now = now.UTC()
	r := row{ID: uuid.NewString(), OrgID: orgID, Name: spec.Name, Description: spec.Description, Salt: spec.Salt, BucketCount: BucketCount,
		Percent: *spec.Percent, LayerID: spec.LayerID, Metrics: metrics, CreatedBy: actor, CreatedAt: now, UpdatedAt: now}
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := checkLayer(tx, orgID, spec.LayerID); err != nil {
			return err
		}
		if err := tx.Create(&r).Error; err != nil {
			if database.IsUniqueViolation(err) {
				return ErrNameTaken
			}
			return fmt.Errorf("insert holdout: %w", err)
		}
		return changed(ctx, tx, actor, r, nil)
	})
	if err != nil {
		return Holdout{}, err
	}
	return r.holdout()
}

// versionRow is one held-out share a holdout has had (table
// holdout_versions): from CreatedAt until the next version.
type versionRow struct {
	HoldoutID string `gorm:"primaryKey;type:uuid"`
	Version   int    `gorm:"primaryKey"`
	OrgID     string `gorm:"type:uuid"`
	Percent   float64
	CreatedAt time.Time
}

func (versionRow) TableName() string { return "holdout_versions" }

// changed is what every change of a holdout does inside its transaction:
// a new version when the held-out share changed (it starts a phase in the
// experiments of the scope), the audit entry, and a config version (the
// config carries the holdouts). before is nil for a creation.
func changed(ctx context.Context, tx *gorm.DB, actor string, now row, before *row) error {
	action := audit.HoldoutCreated
	var was any
	if before != nil {
		action, was = audit.HoldoutUpdated, before.summary()
	}
	if before == nil || before.Percent != now.Percent {
		var last int
		if err := tx.Model(&versionRow{}).Where("holdout_id = ?", now.ID).Select("COALESCE(MAX(version), 0)").Scan(&last).Error; err != nil {
			return fmt.Errorf("read versions of holdout %s: %w", now.ID, err)
		}
		v := versionRow{HoldoutID: now.ID, Version: last + 1, OrgID: now.OrgID, Percent: now.Percent, CreatedAt: now.UpdatedAt}
		if err := tx.Create(&v).Error; err != nil {
			return fmt.Errorf("insert version %d of holdout %s: %w", v.Version, now.ID, err)
		}
	}
	if err := audit.Record(ctx, tx, audit.Entry{OrgID: now.OrgID, Action: action, Actor: actor,
		Summary: fmt.Sprintf("holdout %s holds out %g %%", now.Name, now.Percent), Before: was, After: now.summary(), At: now.UpdatedAt}); err != nil {
		return err
	}
	_, err := experiments.BumpConfigVersion(tx, now.OrgID)
	return err
}

// summary is what the audit log keeps of a holdout: not its metrics.
func (r row) summary() map[string]any {
	return map[string]any{"id": r.ID, "name": r.Name, "percent": r.Percent, "layer_id": r.LayerID}
}

// Update changes a holdout's name, description, percent and metrics.
// salt and layer_id may be omitted (kept) but not changed: either would
// reshuffle who is held out. A new percent applies to users not yet
// assigned (the assigned filter keeps the others; docs/targeting.md).
func (s Store) Update(ctx context.Context, orgID, id, actor string, spec Spec, now time.Time) (Holdout, error) {
	var out row
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		cur, err := get(tx, orgID, id)
		if err != nil {
			return err
		}
		var errs validate.Errors
		validate.Kept(&errs, "salt", &spec.Salt, cur.Salt, "it decides who is held out")
		if spec.LayerID == nil {
			spec.LayerID = cur.LayerID
		} else if cur.LayerID == nil || *spec.LayerID != *cur.LayerID {
			errs.Add("layer_id", "cannot change: the scope is set at creation")
		}
		if err := errs.Err(); err != nil {
			return err
		}
		if err := spec.validate(); err != nil {
			return err
		}
		metrics, err := json.Marshal(spec.Metrics)
		if err != nil {
			return fmt.Errorf("encode metrics: %w", err)
		}
		before := cur
		cur.Name, cur.Description, cur.Percent, cur.Metrics, cur.UpdatedAt = spec.Name, spec.Description, *spec.Percent, metrics, now.UTC()
		if err := tx.Model(&row{}).Where("id = ? AND org_id = ?", cur.ID, orgID).Updates(map[string]any{
			"name": cur.Name, "description": cur.Description, "percent": cur.Percent, "metrics": cur.Metrics, "updated_at": cur.UpdatedAt}).Error; err != nil {
			if database.IsUniqueViolation(err) {
				return ErrNameTaken
			}
			return fmt.Errorf("update holdout: %w", err)
		}
		out = cur
		return changed(ctx, tx, actor, cur, &before)
	})
	if err != nil {
		return Holdout{}, err
	}
	return out.holdout()
}

// Get returns one holdout of the org.
func (s Store) Get(ctx context.Context, orgID, id string) (Holdout, error) {
	r, err := get(s.DB.WithContext(ctx), orgID, id)
	if err != nil {
		return Holdout{}, err
	}
	return r.holdout()
}

// List returns the org's holdouts, oldest first.
func (s Store) List(ctx context.Context, orgID string) ([]Holdout, error) {
	var rows []row
	if err := s.DB.WithContext(ctx).Where("org_id = ?", orgID).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list holdouts: %w", err)
	}
	out := make([]Holdout, 0, len(rows))
	for _, r := range rows {
		h, err := r.holdout()
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

func get(db *gorm.DB, orgID, id string) (row, error) {
	var r row
	if uuid.Validate(id) != nil {
		return r, ErrNotFound
	}
	if err := db.Where("org_id = ? AND id = ?", orgID, id).Take(&r).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return r, ErrNotFound
		}
		return r, fmt.Errorf("read holdout: %w", err)
	}
	return r, nil
}

// checkLayer: layerID, when given, names a layer of the org.
func checkLayer(tx *gorm.DB, orgID string, layerID *string) error {
	if layerID == nil {
		return nil
	}
	if _, err := (layers.Store{DB: tx}).Get(tx.Statement.Context, orgID, *layerID); errors.Is(err, layers.ErrNotFound) {
		return validate.New("layer_id", "no layer %s in this org", *layerID)
	} else if err != nil {
		return err
	}
	return nil
}

// Share is one version of a holdout's held-out share: Percent from At
// until the holdout's next Share.
type Share struct {
	HoldoutID string    `json:"id"`
	Percent   float64   `json:"percent"`
	At        time.Time `json:"-"`
}

// Shares lists, oldest first, every share that the org's holdouts covering
// an experiment of layer layerID ("" when none) have had since before to:
// what the phases of such an experiment are cut by.
func (s Store) Shares(ctx context.Context, orgID, layerID string, to time.Time) ([]Share, error) {
	q := s.DB.WithContext(ctx).Table("holdout_versions v").Joins("JOIN holdouts h ON h.id = v.holdout_id").
		Select("v.holdout_id", "v.percent", "v.created_at AS at").
		Where("v.org_id = ? AND v.created_at < ?", orgID, to)
	if layerID == "" {
		q = q.Where("h.layer_id IS NULL")
	} else {
		q = q.Where("h.layer_id IS NULL OR h.layer_id = ?", layerID)
	}
	var out []Share
	if err := q.Order("v.created_at, v.holdout_id, v.version").Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("read holdout shares of org %s: %w", orgID, err)
	}
	for i := range out {
		out[i].At = out[i].At.UTC()
	}
	return out, nil
}

// Ref names a holdout and its org.
type Ref struct {
	OrgID string
	ID    string
}

// ListAll returns up to limit holdouts of every org that has not been
// deleted (of orgID only, when set), by id, after afterID: what the
// nightly results run computes beside the running experiments.
func (s Store) ListAll(ctx context.Context, orgID, afterID string, limit int) ([]Ref, error) {
	var refs []Ref
	q := s.DB.WithContext(ctx).Table("holdouts AS h").Select("h.org_id AS org_id, h.id AS id").
		Joins("JOIN orgs o ON o.id = h.org_id").Where("o.deleted_at IS NULL")
	if orgID != "" {
		q = q.Where("h.org_id = ?", orgID)
	}
	if afterID != "" { // "" is no UUID, so PostgreSQL cannot compare with it
		q = q.Where("h.id > ?", afterID)
	}
	if err := q.Order("h.id").Limit(limit).Scan(&refs).Error; err != nil {
		return nil, fmt.Errorf("list holdouts: %w", err)
	}
	return refs, nil
}
