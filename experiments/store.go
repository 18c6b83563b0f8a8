package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/expd/expd/audit"
	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/database"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/privacy"
	"github.com/expd/expd/validate"
)

// ErrNotFound is returned for an unknown experiment or one of another org.
var ErrNotFound = errors.New("experiment not found")

// ErrNameTaken is returned when the org already has an experiment of that name.
var ErrNameTaken = errors.New("experiment name already in use in this org")

// Experiment is the API view of an experiment at one config version.
type Experiment struct {
	ID            string        `json:"id"`
	Version       int           `json:"version"`
	Status        string        `json:"status"`
	ConfigVersion int64         `json:"config_version,omitempty"`
	BucketMap     bucketing.Map `json:"bucket_map"`
	CreatedAt     time.Time     `json:"created_at"`
	UpdatedAt     time.Time     `json:"updated_at"`
	Config
}

// Store reads and writes experiments of any org; every method is scoped by
// the org id it is given.
type Store struct{ DB *gorm.DB }

// Create validates cfg and stores it as version 1 with a fresh bucket map.
func (s Store) Create(ctx context.Context, orgID, actor string, cfg Config) (Experiment, error) {
	if err := requestable(cfg.Status); err != nil {
		return Experiment{}, err
	}
	now := time.Now().UTC()
	cfg.Status, cfg.ShippedVariant, cfg.StatusReason = initialStatus(&cfg, now), "", ""
	if err := cfg.Validate(); err != nil {
		return Experiment{}, err
	}
	if err := checkPayloadPolicy(ctx, s.DB, orgID, cfg.PayloadPolicy); err != nil {
		return Experiment{}, err
	}
	bmap, err := bucketing.InitialMap(cfg.Allocation, cfg.BucketCount)
	if err != nil {
		return Experiment{}, validate.New("allocation", "%v", err)
	}
	exp := Row{
		ID: uuid.NewString(), OrgID: orgID, Name: cfg.Name, Status: cfg.Status,
		Salt: cfg.Salt, BucketCount: cfg.BucketCount, CurrentVersion: 1,
		CreatedAt: now, UpdatedAt: now, SignalPendingSince: owedSince(cfg.Status, cfg, now),
	}
	var out Experiment
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if cfg.Layer != nil {
			if err := reserveRange(tx, orgID, cfg.Layer); err != nil {
				return err
			}
			exp.LayerID = &cfg.Layer.ID
		}
		if err := tx.Create(&exp).Error; err != nil {
			if database.IsUniqueViolation(err) {
				return ErrNameTaken
			}
			return fmt.Errorf("insert experiment: %w", err)
		}
		var e error
		if out, e = insertVersion(tx, exp, cfg, bmap, actor); e != nil {
			return e
		}
		return audit.Record(ctx, tx, audit.Entry{OrgID: orgID, ExperimentID: exp.ID, Action: audit.ExperimentCreated,
			Actor: actor, Summary: "created " + out.Name, After: summarize(out), At: now})
	})
	return out, err
}

// Update mints the next version of the experiment named by idOrName.
// salt and bucket_count may be omitted (they are kept) but not changed.
func (s Store) Update(ctx context.Context, orgID, idOrName, actor string, cfg Config) (Experiment, error) {
	return s.update(ctx, orgID, idOrName, actor, 0, func(Experiment) (Config, error) { return cfg, nil })
}

// Patch applies a JSON merge patch (RFC 7396) to the current config and
// stores the result as the next version, as Update does; complete fills
// what the caller derives (built-in goals) before validation. Arrays are
// replaced whole; null removes an optional field. The server-owned
// lifecycle fields (status, shipped_variant, status_reason) are not in the
// patched document: a patch may ask for a status, the rest is carried.
// ifMatch, when not 0, is the version the caller read: another version
// current is ErrStale.
func (s Store) Patch(ctx context.Context, orgID, idOrName, actor string, ifMatch int, patch []byte, complete func(*Config)) (Experiment, error) {
	return s.update(ctx, orgID, idOrName, actor, ifMatch, func(cur Experiment) (Config, error) {
		base, err := json.Marshal(cur.Config)
		if err != nil {
			return Config{}, fmt.Errorf("encode current config: %w", err)
		}
		merged, err := MergePatch(base, patch, "status", "shipped_variant", "status_reason")
		if err != nil {
			return Config{}, err
		}
		cfg, err := DecodeConfig(merged, true)
		if err == nil && cur.Layer != nil && cfg.Layer == nil {
			return cfg, validate.New("layer", "%s", layerFixed)
		}
		if err == nil && complete != nil {
			complete(&cfg)
		}
		return cfg, err
	})
}

// ErrStale is an update conditional on a version (If-Match) that is no
// longer current.
var ErrStale = errors.New("the experiment has a newer version")

func (s Store) update(ctx context.Context, orgID, idOrName, actor string, ifMatch int, next func(Experiment) (Config, error)) (Experiment, error) {
	var out Experiment
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		exp, cur, err := lockCurrent(tx, orgID, idOrName)
		if err != nil {
			return err
		}
		if ifMatch != 0 && ifMatch != cur.Version {
			return fmt.Errorf("%w: version %d is current, the request was made against version %d", ErrStale, cur.Version, ifMatch)
		}
		cfg, err := next(cur)
		if err != nil {
			return err
		}
		var errs validate.Errors
		if cfg.Salt == "" {
			cfg.Salt = exp.Salt
		} else if cfg.Salt != exp.Salt {
			errs.Add("salt", "cannot change: it is a frozen bucketing input for the experiment's life")
		}
		if cfg.BucketCount == 0 {
			cfg.BucketCount = exp.BucketCount
		} else if cfg.BucketCount != exp.BucketCount {
			errs.Add("bucket_count", "cannot change: it is a frozen bucketing input for the experiment's life")
		}
		if cfg.Layer == nil {
			cfg.Layer = cur.Layer
		} else if !cfg.Layer.Same(cur.Layer) {
			errs.Add("layer", "%s", layerFixed)
		}
		if err := requestable(cfg.Status); err != nil {
			errs.Add("status", "%s", validate.Fields(err)[0].Reason)
		}
		fixTuning(&errs, &cfg, cur)
		if err := errs.Err(); err != nil {
			return err
		}
		if err := carryLifecycle(&cfg, cur, time.Now()); err != nil {
			return err
		}
		if err := cfg.Validate(); err != nil {
			return err
		}
		if err := checkPayloadPolicy(ctx, tx, orgID, cfg.PayloadPolicy); err != nil {
			return err
		}
		bmap, err := bucketing.Rebalance(cur.BucketMap, cfg.Allocation, cfg.BucketCount)
		if err != nil {
			return validate.New("allocation", "%v", err)
		}
		exp.Name, exp.Status = cfg.Name, cfg.Status
		exp.CurrentVersion++
		exp.UpdatedAt = time.Now().UTC()
		if err := tx.Model(&Row{}).Where("id = ? AND org_id = ?", exp.ID, orgID).
			Updates(map[string]any{"name": exp.Name, "status": exp.Status, "current_version": exp.CurrentVersion, "updated_at": exp.UpdatedAt,
				"signal_pending_since": owedUpdate(cfg.Status, cfg, exp.UpdatedAt)}).Error; err != nil {
			if database.IsUniqueViolation(err) {
				return ErrNameTaken
			}
			return fmt.Errorf("update experiment: %w", err)
		}
		if out, err = insertVersion(tx, exp, cfg, bmap, actor); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{OrgID: orgID, ExperimentID: exp.ID, Action: audit.ExperimentUpdated,
			Actor: actor, Summary: fmt.Sprintf("updated %s to version %d", out.Name, out.Version), Before: summarize(cur), After: summarize(out), At: exp.UpdatedAt})
	})
	return out, err
}

// checkPayloadPolicy refuses an experiment's payload_policy looser than
// its org's (privacy.CheckExperiment).
func checkPayloadPolicy(ctx context.Context, db *gorm.DB, orgID string, p privacy.Policy) error {
	if p == "" {
		return nil
	}
	org, err := privacy.Store{DB: db}.Get(ctx, orgID)
	if err != nil {
		return err
	}
	return privacy.CheckExperiment(p, org.PayloadPolicy)
}

// Get returns the latest version of one experiment, by id or unique name.
func (s Store) Get(ctx context.Context, orgID, idOrName string) (Experiment, error) {
	db := s.DB.WithContext(ctx)
	exp, err := find(db, orgID, idOrName)
	if err != nil {
		return Experiment{}, err
	}
	return currentView(db, exp)
}

// GetVersion returns one stored version of an experiment.
func (s Store) GetVersion(ctx context.Context, orgID, idOrName string, version int) (Experiment, error) {
	db := s.DB.WithContext(ctx)
	exp, err := find(db, orgID, idOrName)
	if err != nil {
		return Experiment{}, err
	}
	v, err := loadVersion(db, exp.ID, version)
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Experiment{}, ErrNotFound
	}
	if err != nil {
		return Experiment{}, err
	}
	return view(exp, v)
}

// List returns every experiment of the org at its latest version, newest
// first. status filters when non-empty.
func (s Store) List(ctx context.Context, orgID, status string) ([]Experiment, error) {
	db := s.DB.WithContext(ctx)
	type listed struct {
		Row
		Config    []byte
		BucketMap []byte
		Version   int
	}
	q := db.Table("experiments AS e").
		Select("e.*, v.config AS config, v.bucket_map AS bucket_map, v.version AS version").
		Joins("JOIN experiment_versions v ON v.experiment_id = e.id AND v.version = e.current_version").
		Where("e.org_id = ?", orgID).Order("e.created_at DESC, e.id")
	if status != "" {
		q = q.Where("e.status = ?", status)
	}
	var rows []listed
	if err := q.Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("list experiments: %w", err)
	}
	out := make([]Experiment, 0, len(rows))
	for _, r := range rows {
		e, err := view(r.Row, version{Version: r.Version, Config: r.Config, BucketMap: r.BucketMap})
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// ConfigVersion returns the org's current config_version.
func ConfigVersion(ctx context.Context, db *gorm.DB, orgID string) (int64, error) {
	var v int64
	err := db.WithContext(ctx).Model(&orgs.Org{}).Select("config_version").Where("id = ?", orgID).Scan(&v).Error
	if err != nil {
		return 0, fmt.Errorf("read config_version: %w", err)
	}
	return v, nil
}

func find(db *gorm.DB, orgID, idOrName string) (Row, error) {
	var exp Row
	// No id or name can hold these (names follow validName), and
	// PostgreSQL refuses NUL and invalid UTF-8 in a query parameter.
	if len(idOrName) > MaxNameLen || !validName(idOrName) && uuid.Validate(idOrName) != nil {
		return exp, ErrNotFound
	}
	q := db.Where("org_id = ?", orgID)
	if uuid.Validate(idOrName) == nil {
		q = q.Where("id = ?", idOrName)
	} else {
		q = q.Where("name = ?", idOrName)
	}
	if err := q.Take(&exp).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return exp, ErrNotFound
		}
		return exp, fmt.Errorf("find experiment: %w", err)
	}
	return exp, nil
}

// lockCurrent is the opening of every change: the experiment named by
// idOrName, its row locked until tx ends, and its current version.
func lockCurrent(tx *gorm.DB, orgID, idOrName string) (Row, Experiment, error) {
	row, err := find(lockForUpdate(tx), orgID, idOrName)
	if err != nil {
		return row, Experiment{}, err
	}
	cur, err := currentView(tx, row)
	return row, cur, err
}

// currentView is the experiment of row at its current version.
func currentView(db *gorm.DB, row Row) (Experiment, error) {
	v, err := loadVersion(db, row.ID, row.CurrentVersion)
	if err != nil {
		return Experiment{}, err
	}
	return view(row, v)
}

// lockForUpdate serializes concurrent updates of one experiment on
// PostgreSQL; SQLite has a single writer already.
func lockForUpdate(db *gorm.DB) *gorm.DB {
	if database.IsPostgres(db) {
		return db.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	return db
}

// version is a stored config version, still encoded.
type version struct {
	Version   int
	Config    []byte
	BucketMap []byte
}

func (v version) bucketMap() (bucketing.Map, error) {
	var m bucketing.Map
	if err := json.Unmarshal(v.BucketMap, &m); err != nil {
		return nil, fmt.Errorf("decode bucket map of version %d: %w", v.Version, err)
	}
	return m, nil
}

func loadVersion(db *gorm.DB, experimentID string, n int) (version, error) {
	var v VersionRow
	if err := db.Where("experiment_id = ? AND version = ?", experimentID, n).Take(&v).Error; err != nil {
		return version{}, fmt.Errorf("load version %d: %w", n, err)
	}
	return version{Version: v.Version, Config: v.Config, BucketMap: v.BucketMap}, nil
}

func insertVersion(tx *gorm.DB, exp Row, cfg Config, bmap bucketing.Map, actor string) (Experiment, error) {
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return Experiment{}, fmt.Errorf("encode config: %w", err)
	}
	mapJSON, err := json.Marshal(bmap)
	if err != nil {
		return Experiment{}, fmt.Errorf("encode bucket map: %w", err)
	}
	row := VersionRow{
		ID: uuid.NewString(), ExperimentID: exp.ID, OrgID: exp.OrgID, Version: exp.CurrentVersion,
		Config: cfgJSON, BucketMap: mapJSON, CreatedBy: actor, CreatedAt: exp.UpdatedAt,
	}
	if err := tx.Create(&row).Error; err != nil {
		return Experiment{}, fmt.Errorf("insert version %d: %w", exp.CurrentVersion, err)
	}
	cv, err := BumpConfigVersion(tx, exp.OrgID)
	if err != nil {
		return Experiment{}, err
	}
	out := Experiment{ID: exp.ID, Version: exp.CurrentVersion, Status: exp.Status, ConfigVersion: cv,
		BucketMap: bmap, CreatedAt: exp.CreatedAt, UpdatedAt: exp.UpdatedAt, Config: cfg}
	return out, nil
}

// BumpConfigVersion raises the org's config_version inside tx and returns
// the new value.
func BumpConfigVersion(tx *gorm.DB, orgID string) (int64, error) {
	if err := tx.Exec("UPDATE orgs SET config_version = config_version + 1 WHERE id = ?", orgID).Error; err != nil {
		return 0, fmt.Errorf("bump config_version: %w", err)
	}
	var v int64
	if err := tx.Raw("SELECT config_version FROM orgs WHERE id = ?", orgID).Scan(&v).Error; err != nil {
		return 0, fmt.Errorf("read config_version: %w", err)
	}
	return v, nil
}

func view(exp Row, v version) (Experiment, error) {
	bmap, err := v.bucketMap()
	if err != nil {
		return Experiment{}, err
	}
	var cfg Config
	if err := json.Unmarshal(v.Config, &cfg); err != nil {
		return Experiment{}, fmt.Errorf("decode config of %s v%d: %w", exp.ID, v.Version, err)
	}
	// The experiment row holds the current name and status; older versions
	// keep what they were stored with.
	if v.Version == exp.CurrentVersion {
		cfg.Name, cfg.Status = exp.Name, exp.Status
	}
	return Experiment{ID: exp.ID, Version: v.Version, Status: cfg.Status, BucketMap: bmap,
		CreatedAt: exp.CreatedAt, UpdatedAt: exp.UpdatedAt, Config: cfg}, nil
}
