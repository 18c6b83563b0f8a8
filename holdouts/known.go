package holdouts

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Known returns which of ids are holdouts of the org (every holdout of the
// org when ids is nil): an exposure may name a holdout, recording a user's
// membership in it (docs/targeting.md, "Holdout exposures").
func (s Store) Known(ctx context.Context, orgID string, ids []string) (map[string]bool, error) {
	q := s.DB.WithContext(ctx).Model(&row{}).Where("org_id = ?", orgID)
	if ids != nil {
		valid := make([]string, 0, len(ids))
		for _, id := range ids {
			// Comparing a non-UUID string with a uuid column fails on PostgreSQL.
			if uuid.Validate(id) == nil {
				valid = append(valid, id)
			}
		}
		if len(valid) == 0 {
			return map[string]bool{}, nil
		}
		q = q.Where("id IN ?", valid)
	}
	var found []string
	if err := q.Pluck("id", &found).Error; err != nil {
		return nil, fmt.Errorf("look up holdouts: %w", err)
	}
	out := make(map[string]bool, len(found))
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}

// SharesOf lists, oldest first, the held-out shares the org's holdout id
// has had since before to (its versions): the phases of its own results.
func (s Store) SharesOf(ctx context.Context, orgID, id string, to time.Time) ([]Share, error) {
	var out []Share
	err := s.DB.WithContext(ctx).Model(&versionRow{}).Select("holdout_id", "percent", "created_at AS at").
		Where("org_id = ? AND holdout_id = ? AND created_at < ?", orgID, id, to).Order("version").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("read shares of holdout %s: %w", id, err)
	}
	for i := range out {
		out[i].At = out[i].At.UTC()
	}
	return out, nil
}
