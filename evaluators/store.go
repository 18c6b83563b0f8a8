package evaluators

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"gorm.io/datatypes"
	"gorm.io/gorm"

	"github.com/expd/expd/audit"
	"github.com/expd/expd/database"
	"github.com/expd/expd/secrets"
	"github.com/expd/expd/validate"
)

// ErrNotFound: the org has no live evaluator with this id.
var ErrNotFound = errors.New("evaluator not found")

// ErrNoSecretsKey: a judge's key cannot be stored because the server has
// no EXPD_SECRETS_KEY.
var ErrNoSecretsKey = secrets.ErrNoKey

// row is the table's shape. APIKey is sealed (package secrets) and never
// leaves this package except opened, by Load for the evaluating activity.
type row struct {
	ID        string `gorm:"primaryKey"`
	OrgID     string
	Name      string
	Kind      string
	Score     string
	Spec      datatypes.JSON
	APIKey    string `gorm:"column:api_key"`
	Version   int
	CreatedBy string
	CreatedAt time.Time
	UpdatedAt time.Time
	DeletedAt *time.Time
}

func (row) TableName() string { return "evaluators" }

// Evaluator is an evaluator as the API shows it: its spec without the
// judge's key.
type Evaluator struct {
	ID string `json:"id"`
	Spec
	Version   int       `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func (r row) view() Evaluator {
	var s Spec
	_ = json.Unmarshal(r.Spec, &s) // written by this package only, without the key
	if s.Experiments == nil {
		s.Experiments = []string{}
	}
	return Evaluator{ID: r.ID, Spec: s, Version: r.Version, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// Store reads and writes evaluators; Secrets seals judges' keys.
type Store struct {
	DB      *gorm.DB
	Secrets *secrets.Keyring
}

// stored is a validated spec ready for its row: the spec without its key
// and the key apart.
func stored(s Spec) (datatypes.JSON, string, error) {
	key := ""
	if s.Endpoint != nil {
		e := *s.Endpoint
		key, e.APIKey = e.APIKey, ""
		s.Endpoint = &e
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, "", fmt.Errorf("encode evaluator: %w", err)
	}
	return b, key, nil
}

// Create validates spec (a validation error names every bad field) and
// stores it as version 1, recording evaluator.created in the same
// transaction.
func (st Store) Create(ctx context.Context, orgID string, spec Spec, rules Rules, actor string, now time.Time) (Evaluator, error) {
	if err := spec.Validate(ctx, rules); err != nil {
		return Evaluator{}, err
	}
	specJSON, key, err := stored(spec)
	if err != nil {
		return Evaluator{}, err
	}
	at := now.UTC().Truncate(time.Microsecond)
	r := row{ID: uuid.NewString(), OrgID: orgID, Name: spec.Name, Kind: spec.Kind, Score: spec.Score, Spec: specJSON,
		Version: 1, CreatedBy: actor, CreatedAt: at, UpdatedAt: at}
	if spec.Kind == KindJudge {
		if r.APIKey, err = st.Secrets.Seal(key, r.ID); err != nil {
			return Evaluator{}, err
		}
	}
	err = st.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := scoreFree(ctx, tx, r); err != nil {
			return err
		}
		if err := tx.Create(&r).Error; err != nil {
			return scoreTaken(err, "store evaluator")
		}
		return audit.Record(ctx, tx, audit.Entry{OrgID: orgID, Action: audit.EvaluatorCreated, Actor: actor,
			Summary: "evaluator " + r.ID + " (" + r.Name + ") created", After: r.view(), At: at})
	})
	if err != nil {
		return Evaluator{}, err
	}
	return r.view(), nil
}

// scoreFree refuses a score name another live evaluator of the kind
// writes (they would replace each other's scores).
func scoreFree(ctx context.Context, tx *gorm.DB, r row) error {
	var other row
	err := tx.WithContext(ctx).Select("id").Where("org_id = ? AND score = ? AND kind = ? AND deleted_at IS NULL AND id <> ?",
		r.OrgID, r.Score, r.Kind, r.ID).Limit(1).Find(&other).Error
	if err != nil {
		return fmt.Errorf("check score name: %w", err)
	}
	if other.ID != "" {
		return validate.New("score", "is written by evaluator %s already (two evaluators of a kind would replace each other's scores)", other.ID)
	}
	return nil
}

// scoreTaken turns a race past scoreFree (the unique index) into the same
// validation error.
func scoreTaken(err error, doing string) error {
	if database.IsUniqueViolation(err) {
		return validate.New("score", "is written by another evaluator of this kind already")
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// List returns the org's live evaluators, oldest first.
func (st Store) List(ctx context.Context, orgID string) ([]Evaluator, error) {
	var rows []row
	if err := st.DB.WithContext(ctx).Where("org_id = ? AND deleted_at IS NULL", orgID).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list evaluators: %w", err)
	}
	out := make([]Evaluator, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.view())
	}
	return out, nil
}

// find reads one live evaluator of the org; a malformed id is not found.
func find(ctx context.Context, db *gorm.DB, orgID, id string) (row, error) {
	var r row
	if uuid.Validate(id) != nil {
		return r, ErrNotFound
	}
	if err := db.WithContext(ctx).Where("id = ? AND org_id = ? AND deleted_at IS NULL", id, orgID).Limit(1).Find(&r).Error; err != nil {
		return r, fmt.Errorf("read evaluator %s: %w", id, err)
	}
	if r.ID == "" {
		return r, ErrNotFound
	}
	return r, nil
}

// Get returns one live evaluator of the org.
func (st Store) Get(ctx context.Context, orgID, id string) (Evaluator, error) {
	r, err := find(ctx, st.DB, orgID, id)
	if err != nil {
		return Evaluator{}, err
	}
	return r.view(), nil
}

// Update replaces an evaluator's spec with spec (validated like Create's)
// and raises its version, recording evaluator.updated with both versions.
// A judge's api_key may be omitted to keep the stored one; a sent key
// replaces it.
func (st Store) Update(ctx context.Context, orgID, id string, spec Spec, rules Rules, actor string, now time.Time) (Evaluator, error) {
	before, err := find(ctx, st.DB, orgID, id)
	if err != nil {
		return Evaluator{}, err
	}
	rules.KeyStored = before.APIKey != ""
	if err := spec.Validate(ctx, rules); err != nil {
		return Evaluator{}, err
	}
	specJSON, key, err := stored(spec)
	if err != nil {
		return Evaluator{}, err
	}
	sealed := ""
	if spec.Kind == KindJudge {
		if key == "" {
			// Kept: opened and sealed again, so an edit also moves it
			// under the current key during a rotation.
			if key, err = st.Secrets.Open(before.APIKey, id); err != nil {
				return Evaluator{}, fmt.Errorf("open the stored judge key of %s: %w", id, err)
			}
		}
		if sealed, err = st.Secrets.Seal(key, id); err != nil {
			return Evaluator{}, err
		}
	}
	at := now.UTC().Truncate(time.Microsecond)
	var after row
	err = st.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		cur, err := find(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		next := cur
		next.Name, next.Kind, next.Score, next.Spec, next.APIKey, next.Version, next.UpdatedAt =
			spec.Name, spec.Kind, spec.Score, specJSON, sealed, cur.Version+1, at
		if err := scoreFree(ctx, tx, next); err != nil {
			return err
		}
		res := tx.Model(&row{}).Where("id = ? AND version = ? AND deleted_at IS NULL", id, cur.Version).Updates(map[string]any{
			"name": next.Name, "kind": next.Kind, "score": next.Score, "spec": next.Spec, "api_key": next.APIKey,
			"version": next.Version, "updated_at": next.UpdatedAt})
		if res.Error != nil {
			return scoreTaken(res.Error, "update evaluator "+id)
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("evaluator %s changed concurrently; retry", id)
		}
		after = next
		return audit.Record(ctx, tx, audit.Entry{OrgID: orgID, Action: audit.EvaluatorUpdated, Actor: actor,
			Summary: "evaluator " + id + " (" + next.Name + ") updated to version " + strconv.Itoa(next.Version),
			Before:  cur.view(), After: next.view(), At: at})
	})
	if err != nil {
		return Evaluator{}, err
	}
	return after.view(), nil
}

// Delete stops the evaluator (its workflow finds it deleted and ends) and
// records evaluator.deleted; its scores and evaluations stay.
func (st Store) Delete(ctx context.Context, orgID, id, actor string, now time.Time) error {
	at := now.UTC().Truncate(time.Microsecond)
	return st.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r, err := find(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		res := tx.Model(&row{}).Where("id = ? AND deleted_at IS NULL", id).Update("deleted_at", at)
		if res.Error != nil {
			return fmt.Errorf("delete evaluator %s: %w", id, res.Error)
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		return audit.Record(ctx, tx, audit.Entry{OrgID: orgID, Action: audit.EvaluatorDeleted, Actor: actor,
			Summary: "evaluator " + id + " (" + r.Name + ") deleted", Before: r.view(), At: at})
	})
}

// JudgeKeys is the column of sealed judges' keys (deleted evaluators'
// included) `expd migrate` seals again under the current key during a
// rotation of EXPD_SECRETS_KEY (secrets.Keyring.ResealColumn).
var JudgeKeys = secrets.Column{Table: "evaluators", Key: "id", Secret: "api_key", Owner: func(id string) string { return id }}
