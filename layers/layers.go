// Package layers owns the layers table: bucket spaces of their own that
// experiments share without overlapping (docs/targeting.md, "Layers").
// Which experiment holds which range is the experiments' business (their
// config's layer); this package answers what a layer is, and which of its
// space is free given the ranges taken.
package layers

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/expd/expd/audit"
	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/database"
	"github.com/expd/expd/validate"
)

// ErrNotFound: no such layer in the org.
var ErrNotFound = errors.New("layer not found")

// ErrNameTaken: the org has a layer of that name.
var ErrNameTaken = errors.New("layer name already in use in this org")

// DefaultBucketCount is a layer's bucket_count when the request has none:
// ranges to 0.01 % of traffic.
const DefaultBucketCount = 10_000

// MaxDescriptionLen bounds a layer's description.
const MaxDescriptionLen = 2_000

// Spec is a layer as POST and PUT take it.
type Spec struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Salt        string `json:"salt"`
	BucketCount uint32 `json:"bucket_count,omitempty"`
}

// Layer is a stored layer.
type Layer struct {
	ID          string    `json:"id" gorm:"primaryKey;type:uuid"`
	OrgID       string    `json:"-" gorm:"type:uuid"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Salt        string    `json:"salt"`
	BucketCount uint32    `json:"bucket_count"`
	CreatedBy   string    `json:"-"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// TableName names the table.
func (Layer) TableName() string { return "layers" }

// Slot is the range [start, end) of the layer, fractions of its space, as
// bucket bounds: what a client compares a user's layer bucket with.
func (l Layer) Slot(start, end float64) bucketing.Slot {
	return bucketing.Slot{ID: l.ID, Salt: l.Salt, BucketCount: l.BucketCount,
		Start: bucketing.BucketOfFraction(start, l.BucketCount), End: bucketing.BucketOfFraction(end, l.BucketCount)}
}

func (s *Spec) validate() error {
	var errs validate.Errors
	switch {
	case s.Name == "":
		errs.Add("name", "is required")
	default:
		errs.Name("name", s.Name)
	}
	errs.Text("description", s.Description, MaxDescriptionLen, false)
	errs.Salt("salt", s.Salt)
	if s.BucketCount == 0 {
		s.BucketCount = DefaultBucketCount
	} else if s.BucketCount > bucketing.MaxBucketCount {
		errs.Add("bucket_count", "must be at most %d", bucketing.MaxBucketCount)
	}
	return errs.Err()
}

// Store reads and writes layers; every method is scoped by org.
type Store struct{ DB *gorm.DB }

// Create stores a new layer.
func (s Store) Create(ctx context.Context, orgID, actor string, spec Spec, now time.Time) (Layer, error) {
	if err := spec.validate(); err != nil {
		return Layer{}, err
	}
	now = now.UTC()
	l := Layer{ID: uuid.NewString(), OrgID: orgID, Name: spec.Name, Description: spec.Description, Salt: spec.Salt,
		BucketCount: spec.BucketCount, CreatedBy: actor, CreatedAt: now, UpdatedAt: now}
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&l).Error; err != nil {
			if database.IsUniqueViolation(err) {
				return ErrNameTaken
			}
			return fmt.Errorf("insert layer: %w", err)
		}
		return record(ctx, tx, actor, l, nil)
	})
	if err != nil {
		return Layer{}, err
	}
	return l, nil
}

// record writes the audit entry of a change of l (before is nil for a
// creation) inside its transaction.
func record(ctx context.Context, tx *gorm.DB, actor string, l Layer, before *Layer) error {
	e := audit.Entry{OrgID: l.OrgID, Action: audit.LayerCreated, Actor: actor, Summary: "layer " + l.Name, After: l.summary(), At: l.UpdatedAt}
	if before != nil {
		e.Action, e.Before = audit.LayerUpdated, before.summary()
	}
	return audit.Record(ctx, tx, e)
}

// summary is what the audit log keeps of a layer.
func (l Layer) summary() map[string]any {
	return map[string]any{"id": l.ID, "name": l.Name, "description": l.Description, "bucket_count": l.BucketCount}
}

// Update changes a layer's name and description. salt and bucket_count
// may be omitted (kept) but not changed: every experiment of the layer
// would reshuffle its users.
func (s Store) Update(ctx context.Context, orgID, id, actor string, spec Spec, now time.Time) (Layer, error) {
	var out Layer
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		cur, err := Lock(tx, orgID, id)
		if err != nil {
			return err
		}
		var errs validate.Errors
		const frozen = "it is a frozen bucketing input for the layer's life"
		validate.Kept(&errs, "salt", &spec.Salt, cur.Salt, frozen)
		validate.Kept(&errs, "bucket_count", &spec.BucketCount, cur.BucketCount, frozen)
		if err := errs.Err(); err != nil {
			return err
		}
		if err := spec.validate(); err != nil {
			return err
		}
		before := cur
		cur.Name, cur.Description, cur.UpdatedAt = spec.Name, spec.Description, now.UTC()
		if err := tx.Model(&Layer{}).Where("id = ? AND org_id = ?", cur.ID, orgID).
			Updates(map[string]any{"name": cur.Name, "description": cur.Description, "updated_at": cur.UpdatedAt}).Error; err != nil {
			if database.IsUniqueViolation(err) {
				return ErrNameTaken
			}
			return fmt.Errorf("update layer: %w", err)
		}
		out = cur
		return record(ctx, tx, actor, cur, &before)
	})
	return out, err
}

// Get returns one layer of the org.
func (s Store) Get(ctx context.Context, orgID, id string) (Layer, error) {
	return get(s.DB.WithContext(ctx), orgID, id)
}

// Lock reads a layer inside tx and, on PostgreSQL, locks its row until tx
// ends: creating experiments in one layer one at a time is what keeps
// their ranges from overlapping.
func Lock(tx *gorm.DB, orgID, id string) (Layer, error) {
	if database.IsPostgres(tx) {
		tx = tx.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	return get(tx, orgID, id)
}

func get(db *gorm.DB, orgID, id string) (Layer, error) {
	var l Layer
	// PostgreSQL refuses a non-UUID for a uuid column: not one of ours.
	if uuid.Validate(id) != nil {
		return l, ErrNotFound
	}
	if err := db.Where("org_id = ? AND id = ?", orgID, id).Take(&l).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return l, ErrNotFound
		}
		return l, fmt.Errorf("read layer: %w", err)
	}
	return l, nil
}

// List returns the org's layers, oldest first.
func (s Store) List(ctx context.Context, orgID string) ([]Layer, error) {
	out := []Layer{}
	if err := s.DB.WithContext(ctx).Where("org_id = ?", orgID).Order("created_at, id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list layers: %w", err)
	}
	return out, nil
}

// Range is a part [Start, End) of a layer's space, fractions in [0, 1].
type Range struct {
	Start float64
	End   float64
}

// Overlaps tells whether two ranges share any part.
func (r Range) Overlaps(o Range) bool { return r.Start < o.End && o.Start < r.End }

// Free is the layer's space that no range of taken covers, in order.
func Free(taken []Range) []Range {
	sorted := append([]Range(nil), taken...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Start < sorted[j].Start })
	var free []Range
	at := 0.0
	for _, r := range sorted {
		if r.Start > at {
			free = append(free, Range{at, r.Start})
		}
		at = max(at, r.End)
	}
	if at < 1 {
		free = append(free, Range{at, 1})
	}
	return free
}
