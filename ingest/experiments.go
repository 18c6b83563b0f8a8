package ingest

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// Refs maps the ways an org's experiments are referred to (canonical id
// and unique name) to the canonical id.
type Refs map[string]string

// LookupExperiments resolves refs (ids or names) of the org's experiments;
// refs of unknown experiments, and of other orgs' experiments, are absent
// from the answer. nil refs loads every experiment of the org, for imports
// that resolve many lines without touching the database again.
func LookupExperiments(ctx context.Context, db *gorm.DB, orgID string, refs []string) (Refs, error) {
	q := db.WithContext(ctx).Table("experiments").Select("id", "name").Where("org_id = ?", orgID)
	if refs != nil {
		var ids, names []string
		for _, r := range refs {
			// A UUID-shaped ref is an id (names cannot be UUIDs); comparing
			// other strings with a uuid column would fail on PostgreSQL.
			if uuid.Validate(r) == nil {
				ids = append(ids, r)
			} else {
				names = append(names, r)
			}
		}
		switch {
		case len(ids) == 0 && len(names) == 0:
			return Refs{}, nil
		case len(ids) == 0:
			q = q.Where("name IN ?", names)
		case len(names) == 0:
			q = q.Where("id IN ?", ids)
		default:
			q = q.Where("id IN ? OR name IN ?", ids, names)
		}
	}
	var rows []struct{ ID, Name string }
	if err := q.Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("look up experiments: %w", err)
	}
	out := make(Refs, 2*len(rows))
	for _, r := range rows {
		out[r.ID] = r.ID
		out[r.Name] = r.ID
	}
	return out, nil
}
