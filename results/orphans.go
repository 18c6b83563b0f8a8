package results

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/expd/expd/metrics"
)

// Orphans counts the scores a run's score metrics read whose model call
// never arrived (docs/quality.md, "Orphan scores"): scores of the org
// stamped in the window, of a name (and source) a score metric reads,
// whose call_id is the id of no event of the org. A score may arrive
// before its call, so a run counts the ones still waiting; a call id of
// another org is one of them.
type Orphans struct {
	// Total counts each such score once, whichever metrics read it.
	Total int64 `json:"total"`
	// ByMetric is the count of each score metric, by metric name.
	ByMetric map[string]int64 `json:"by_metric"`
}

// countOrphans counts the orphan scores of the score metrics of ms in one
// read of the org's scores of the window (index scores_org_ts), each
// probed against the event ids (event_ids on PostgreSQL, the events key
// on SQLite).
func countOrphans(ctx context.Context, db *gorm.DB, orgID string, w Window, ms []metrics.Resolved) (Orphans, error) {
	d := dialectOf(db)
	var names []string
	var conds []string
	for _, m := range ms {
		if !ReadsScores(m) {
			continue
		}
		cond := "sc.name = " + sqlString(m.Source.Score)
		if m.Source.ScoreSource != "" {
			cond += " AND sc.source = " + sqlString(m.Source.ScoreSource)
		}
		names, conds = append(names, m.Name), append(conds, "("+cond+")")
	}
	o := Orphans{ByMetric: make(map[string]int64, len(names))}
	if len(conds) == 0 {
		return o, nil
	}
	cols := []string{"COUNT(*)"}
	for _, c := range conds {
		cols = append(cols, "COALESCE(SUM(CASE WHEN "+c+" THEN 1 ELSE 0 END), 0)")
	}
	q := `SELECT ` + strings.Join(cols, ", ") + `
FROM scores sc
WHERE sc.org_id = ? AND sc.ts >= ? AND sc.ts < ? AND (` + strings.Join(conds, " OR ") + `)
  AND NOT EXISTS (SELECT 1 FROM ` + d.eventIDs + ` i WHERE i.org_id = sc.org_id AND i.event_id = sc.call_id)`
	counts := make([]int64, len(cols))
	dest := make([]any, len(cols))
	for i := range counts {
		dest[i] = &counts[i]
	}
	if err := db.WithContext(ctx).Raw(q, orgID, w.Start, w.End).Row().Scan(dest...); err != nil {
		return Orphans{}, fmt.Errorf("count orphan scores of org %s: %w", orgID, err)
	}
	o.Total = counts[0]
	for i, n := range names {
		o.ByMetric[n] = counts[i+1]
	}
	return o, nil
}
