// Package erasure owns the erasures table: one row per request to erase
// one user of an org (docs/privacy.md "Erasure"). The user is named by
// the keyed hash of their id (UserHash) everywhere that outlives the
// request: the workflow id, the audit log and the row's tombstone. The id
// itself is kept sealed in the row only while the erasure runs, so the
// workflow's activities read it by the erasure's id and it never enters a
// workflow history. The row stays as a tombstone: ingest drops the
// user's events that arrive within TombstoneTTL (Tombstones).
package erasure

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
	"github.com/expd/expd/database"
	"github.com/expd/expd/secrets"
)

// States of an erasure.
const (
	StateRunning   = "running"
	StateCompleted = "completed"
)

// Tables an erasure removes rows from, as GET /v1/erasures/{id} counts
// them. events and scores are those of the events store (PostgreSQL or
// SQLite, or ClickHouse when configured); event ids go with their events.
const (
	TableEvents        = "events"
	TableScores        = "scores"
	TableEvaluations   = "evaluations"
	TableAssignments   = "assignments"
	TableResultRollups = "result_rollups"
)

// Tables lists them in the order the workflow erases them.
var Tables = []string{TableScores, TableEvaluations, TableEvents, TableAssignments, TableResultRollups}

// TombstoneTTL is how long after a request ingest drops the user's
// events: a client's spill file replays up to 24 hours later, and a week
// covers a client that was offline over a weekend.
const TombstoneTTL = 7 * 24 * time.Hour

// macPurpose separates the user hashes from other keyed hashes.
const macPurpose = "erasure-user"

// ErrNotFound: no erasure of the org has that id.
var ErrNotFound = errors.New("erasure not found")

// ErrDone: the erasure has completed, so its user id is gone.
var ErrDone = errors.New("erasure completed")

// Row is the table's shape.
type Row struct {
	ID           string `gorm:"primaryKey"`
	OrgID        string
	UserHash     string
	UserIDSealed string
	State        string
	Removed      datatypes.JSON
	RequestedBy  string
	CreatedAt    time.Time
	CompletedAt  *time.Time
}

func (Row) TableName() string { return "erasures" }

// View is an erasure as the API shows it.
type View struct {
	ID          string           `json:"id"`
	State       string           `json:"state"`
	UserHash    string           `json:"user_hash"`
	Removed     map[string]int64 `json:"removed"`
	CreatedAt   time.Time        `json:"created_at"`
	CompletedAt *time.Time       `json:"completed_at,omitempty"`
}

func (r Row) view() View {
	v := View{ID: r.ID, State: r.State, UserHash: r.UserHash, Removed: map[string]int64{}, CreatedAt: r.CreatedAt.UTC(), CompletedAt: r.CompletedAt}
	_ = json.Unmarshal(r.Removed, &v.Removed)
	for _, t := range Tables {
		if _, ok := v.Removed[t]; !ok {
			v.Removed[t] = 0
		}
	}
	if v.CompletedAt != nil {
		at := v.CompletedAt.UTC()
		v.CompletedAt = &at
	}
	return v
}

// UserHash is the keyed hash naming userID: stable per server key, so a
// second request for the same user finds the first, and useless to
// anyone without the key.
func UserHash(ring *secrets.Keyring, userID string) (string, error) {
	h, err := ring.MAC(macPurpose, userID)
	if err != nil {
		return "", fmt.Errorf("hash user id: %w", err)
	}
	return h, nil
}

// Create records a request to erase userID of the org, with the audit
// entry naming the user by hash, and returns it. While an erasure of the
// same user runs, it returns that one (created false): the caller starts
// its workflow again, which finds it running.
func Create(ctx context.Context, db *gorm.DB, ring *secrets.Keyring, orgID, userID, actor string, now time.Time) (View, bool, error) {
	hash, err := UserHash(ring, userID)
	if err != nil {
		return View{}, false, err
	}
	r := Row{ID: uuid.NewString(), OrgID: orgID, UserHash: hash, State: StateRunning, Removed: datatypes.JSON(`{}`),
		RequestedBy: actor, CreatedAt: now.UTC().Truncate(time.Microsecond)}
	if r.UserIDSealed, err = ring.Seal(userID, r.ID); err != nil {
		return View{}, false, fmt.Errorf("seal user id: %w", err)
	}
	err = db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&r).Error; err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{OrgID: orgID, Action: audit.ErasureRequested, Actor: actor,
			Summary: "erasure of user " + hash + " requested", After: map[string]string{"erasure_id": r.ID, "user_hash": hash}})
	})
	if database.IsUniqueViolation(err) {
		var running Row
		if err := db.WithContext(ctx).Where("org_id = ? AND user_hash = ? AND state = ?", orgID, hash, StateRunning).Take(&running).Error; err != nil {
			return View{}, false, fmt.Errorf("read running erasure: %w", err)
		}
		return running.view(), false, nil
	}
	if err != nil {
		return View{}, false, fmt.Errorf("record erasure: %w", err)
	}
	changed(orgID)
	return r.view(), true, nil
}

// Get returns the org's erasure id.
func Get(ctx context.Context, db *gorm.DB, orgID, id string) (View, error) {
	if _, err := uuid.Parse(id); err != nil {
		return View{}, ErrNotFound // not a UUID: PostgreSQL would refuse to compare
	}
	var r Row
	err := db.WithContext(ctx).Where("org_id = ? AND id = ?", orgID, id).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return View{}, ErrNotFound
	}
	if err != nil {
		return View{}, fmt.Errorf("read erasure %s: %w", id, err)
	}
	return r.view(), nil
}

// Subject is what an activity erases: the org and the opened user id,
// and when the erasure was requested.
type Subject struct {
	OrgID     string
	UserID    string
	Requested time.Time
}

// Open reads the running erasure id and opens its user id; ErrDone once
// it has completed (its id is cleared).
func Open(ctx context.Context, db *gorm.DB, ring *secrets.Keyring, id string) (Subject, error) {
	var r Row
	if err := db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return Subject{}, fmt.Errorf("read erasure %s: %w", id, err)
	}
	if r.State == StateCompleted || r.UserIDSealed == "" {
		return Subject{}, ErrDone
	}
	userID, err := ring.Open(r.UserIDSealed, r.ID)
	if err != nil {
		return Subject{}, fmt.Errorf("open user id of erasure %s: %w", id, err)
	}
	return Subject{OrgID: r.OrgID, UserID: userID, Requested: r.CreatedAt}, nil
}

// AddRemoved adds n to the count of rows removed from table. A retried
// step removes nothing the first attempt removed, so it adds 0.
func AddRemoved(ctx context.Context, db *gorm.DB, id, table string, n int64) error {
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var r Row
		if err := tx.Select("id", "removed").Where("id = ?", id).Take(&r).Error; err != nil {
			return fmt.Errorf("read erasure %s: %w", id, err)
		}
		counts := map[string]int64{}
		_ = json.Unmarshal(r.Removed, &counts)
		counts[table] += n
		b, _ := json.Marshal(counts)
		return tx.Model(&Row{}).Where("id = ?", id).Update("removed", datatypes.JSON(b)).Error
	})
}

// Complete marks the erasure completed, clears its user id and records
// the counts in the audit log (once, whoever retries). workflowID names
// the workflow that completed it.
func Complete(ctx context.Context, db *gorm.DB, id, workflowID string, now time.Time) (View, error) {
	var out View
	var orgID string
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var r Row
		if err := tx.Where("id = ?", id).Take(&r).Error; err != nil {
			return fmt.Errorf("read erasure %s: %w", id, err)
		}
		if r.State != StateCompleted {
			at := now.UTC().Truncate(time.Microsecond)
			r.State, r.UserIDSealed, r.CompletedAt = StateCompleted, "", &at
			if err := tx.Model(&Row{}).Where("id = ?", id).
				Updates(map[string]any{"state": r.State, "user_id_sealed": "", "completed_at": at}).Error; err != nil {
				return fmt.Errorf("complete erasure %s: %w", id, err)
			}
		}
		out, orgID = r.view(), r.OrgID
		return audit.Record(ctx, tx, audit.Entry{OrgID: r.OrgID, Action: audit.ErasureCompleted, Actor: audit.SystemActor,
			WorkflowID: workflowID, Summary: "erasure of user " + r.UserHash + " completed", DedupKey: "erasure.completed/" + id,
			After: map[string]any{"erasure_id": id, "user_hash": r.UserHash, "removed": out.Removed}})
	})
	if err == nil {
		changed(orgID)
	}
	return out, err
}
