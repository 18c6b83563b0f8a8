package experiments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
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
	err = db.Model(&VersionRow{}).Select("COALESCE(MAX(version), 0)").
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

// ShippedAt returns when the experiment shipped; nil when it has not.
func (s Store) ShippedAt(ctx context.Context, orgID, idOrName string) (*time.Time, error) {
	exp, err := find(s.DB.WithContext(ctx), orgID, idOrName)
	if err != nil {
		return nil, err
	}
	return exp.ShippedAt, nil
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

// ListRunningPerOrg returns running experiments of orgs that have not
// been deleted, ordered by org, keeping only the perOrg least recently
// health-checked of each org (never checked: as if checked at creation;
// ties by id): the hourly health run's bounded, rotating selection. A page
// holds whole orgs only, those after afterOrg ("" from the start), up to
// limit experiments (limit must exceed perOrg); more says whether orgs
// remain after the page's last.
func (s Store) ListRunningPerOrg(ctx context.Context, perOrg int, afterOrg string, limit int) (refs []RunningRef, more bool, err error) {
	q := s.DB.WithContext(ctx).Table("(?) AS r", s.rankedRunning()).Select("r.org_id AS org_id, r.id AS id").Where("r.n <= ?", perOrg)
	if afterOrg != "" { // "" is no UUID, so PostgreSQL cannot compare with it
		q = q.Where("r.org_id > ?", afterOrg)
	}
	if err := q.Order("r.org_id, r.n").Limit(limit + 1).Scan(&refs).Error; err != nil {
		return nil, false, fmt.Errorf("list running experiments per org: %w", err)
	}
	if len(refs) <= limit {
		return refs, false, nil
	}
	// Cut before the org the limit splits, so no org spans two pages (a
	// page's checks move its experiments back in the rotation).
	last := refs[limit].OrgID
	for len(refs) > 0 && refs[len(refs)-1].OrgID == last {
		refs = refs[:len(refs)-1]
	}
	return refs, true, nil
}

// MarkHealthChecked records that the hourly health run at instant at
// checked (or attempted) the experiment: it moves to the back of its
// org's rotation.
func (s Store) MarkHealthChecked(ctx context.Context, orgID, experimentID string, at time.Time) error {
	err := s.DB.WithContext(ctx).Model(&Row{}).Where("id = ? AND org_id = ?", experimentID, orgID).
		Update("last_health_checked_at", at.UTC()).Error
	if err != nil {
		return fmt.Errorf("mark %s health-checked: %w", experimentID, err)
	}
	return nil
}

// CountRunningBeyond counts the running experiments that ListRunningPerOrg
// leaves out with the same perOrg.
func (s Store) CountRunningBeyond(ctx context.Context, perOrg int) (int64, error) {
	var n int64
	err := s.DB.WithContext(ctx).Table("(?) AS r", s.rankedRunning()).Where("r.n > ?", perOrg).Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("count running experiments beyond %d per org: %w", perOrg, err)
	}
	return n, nil
}

// rankedRunning numbers each org's running experiments, least recently
// health-checked first.
func (s Store) rankedRunning() *gorm.DB {
	return s.DB.Table("experiments AS e").
		Select("e.org_id AS org_id, e.id AS id, ROW_NUMBER() OVER (PARTITION BY e.org_id ORDER BY COALESCE(e.last_health_checked_at, e.created_at), e.id) AS n").
		Joins("JOIN orgs o ON o.id = e.org_id").
		Where("e.status = ? AND o.deleted_at IS NULL", StatusRunning)
}

// ListScheduledOrRunning returns up to limit experiments of live orgs whose
// status is scheduled or running, by id after afterID ("" from the start):
// those whose lifecycle workflow may have a step to take.
func (s Store) ListScheduledOrRunning(ctx context.Context, afterID string, limit int) ([]RunningRef, error) {
	var refs []RunningRef
	q := s.DB.WithContext(ctx).Table("experiments AS e").Select("e.org_id AS org_id, e.id AS id").
		Joins("JOIN orgs o ON o.id = e.org_id").
		Where("e.status IN ? AND o.deleted_at IS NULL", []string{StatusScheduled, StatusRunning})
	if afterID != "" {
		q = q.Where("e.id > ?", afterID)
	}
	if err := q.Order("e.id").Limit(limit).Scan(&refs).Error; err != nil {
		return nil, fmt.Errorf("list scheduled and running experiments: %w", err)
	}
	return refs, nil
}
