package experiments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/expd/expd/models"
)

// ErrNoVersionBefore: the experiment was created after the instant asked for.
var ErrNoVersionBefore = errors.New("experiment has no version before that instant")

// VersionAt returns the version of an experiment that was live just
// before t (its latest version created before t): ErrNotFound when the
// org has no such experiment, ErrNoVersionBefore when it did not exist yet.
func (s Store) VersionAt(ctx context.Context, orgID, idOrName string, t time.Time) (Experiment, error) {
	db := s.DB.WithContext(ctx)
	exp, err := find(db, orgID, idOrName)
	if err != nil {
		return Experiment{}, err
	}
	var n int
	err = db.Model(&models.ExperimentVersion{}).Select("COALESCE(MAX(version), 0)").
		Where("experiment_id = ? AND created_at < ?", exp.ID, t).Scan(&n).Error
	if err != nil {
		return Experiment{}, fmt.Errorf("find version of %s at %s: %w", exp.ID, t.Format(time.RFC3339), err)
	}
	if n == 0 {
		return Experiment{}, ErrNoVersionBefore
	}
	v, err := loadVersion(db, exp.ID, n)
	if err != nil {
		return Experiment{}, fmt.Errorf("load experiment %s v%d: %w", exp.ID, n, err)
	}
	return view(exp, v)
}

// RunningRef names a running experiment and its org.
type RunningRef struct {
	OrgID string
	ID    string
}

// ListRunning returns up to limit running experiments of orgID ("": of
// every org that has not been deleted), by id, after afterID ("" from the
// start).
func (s Store) ListRunning(ctx context.Context, orgID, afterID string, limit int) ([]RunningRef, error) {
	var refs []RunningRef
	q := s.DB.WithContext(ctx).Table("experiments AS e").Select("e.org_id AS org_id, e.id AS id").
		Joins("JOIN orgs o ON o.id = e.org_id").
		Where("e.status = ? AND o.deleted_at IS NULL", StatusRunning)
	if orgID != "" {
		q = q.Where("e.org_id = ?", orgID)
	}
	if afterID != "" { // "" is no UUID, so PostgreSQL cannot compare with it
		q = q.Where("e.id > ?", afterID)
	}
	if err := q.Order("e.id").Limit(limit).Scan(&refs).Error; err != nil {
		return nil, fmt.Errorf("list running experiments: %w", err)
	}
	return refs, nil
}
