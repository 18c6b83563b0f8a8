package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/erasure"
	"github.com/expd/expd/secrets"
)

// erasureTiming is one user's erasure at the current size: each step of
// the Erasure workflow (activities.EraseTable per table, then
// CompleteErasure) run in order on the real activities, timed alone,
// with the rows it removed.
type erasureTiming struct {
	events int64
	total  time.Duration
	steps  []string // "table: rows in duration"
}

// erase erases one user of the first experiment's traffic (a user of the
// fill's middle day: the events, pins and scores a fill gives a user) the
// way the workflow does, without Temporal in the timing.
func (e *env) erase(ctx context.Context, pass int) (erasureTiming, error) {
	m := erasureTiming{events: e.events}
	key, err := secrets.NewKey()
	if err != nil {
		return m, err
	}
	ring, err := secrets.Parse(key, "")
	if err != nil {
		return m, err
	}
	user := fmt.Sprintf("p%d-d%d-u%d", pass, e.cfg.days/2, 10) // u % 10 == 0: the first experiment's
	v, _, err := erasure.Create(ctx, e.db, ring, e.orgID, user, "bench", time.Now())
	if err != nil {
		return m, err
	}
	acts := &activities.Activities{DB: e.db, Secrets: ring}
	start := time.Now()
	for _, table := range erasure.Tables {
		t0 := time.Now()
		res, err := acts.EraseTable(ctx, activities.EraseTableInput{ErasureID: v.ID, Table: table})
		if err != nil {
			return m, err
		}
		m.steps = append(m.steps, fmt.Sprintf("%s %d in %s", table, res.Removed, time.Since(t0).Round(time.Millisecond)))
	}
	if _, err := acts.CompleteErasure(ctx, activities.CompleteErasureInput{ErasureID: v.ID}); err != nil {
		return m, err
	}
	m.total = time.Since(start)
	return m, nil
}

func (m erasureTiming) row() string {
	return fmt.Sprintf("| %d | %s | %s |", m.events, m.total.Round(time.Millisecond), strings.Join(m.steps, "; "))
}
