package ingest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/expd/expd/plans"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/telemetry"
)

// commit stores a group of requests in one transaction and answers each.
// slot is the group's among the transactions running at once: orgs
// without an allowance count their usage in that slot's row, so
// concurrent groups of one org do not queue on one counter row.
func (w *Writer) commit(group []*request, slot int) {
	if len(group) == 0 {
		return
	}
	now := w.opts.Now().UTC()
	month := MonthOf(now)
	owned, owner := splitOwnership(group)
	sc := splitScores(group)
	outcomes := make([]Outcome, len(group))
	var refusals []error
	ctx, cancel := context.WithTimeout(context.Background(), w.opts.CommitTimeout)
	defer cancel()
	started := time.Now()
	err := w.store.inTx(ctx, func(tx groupTx) error {
		var err error
		refusals, err = admit(ctx, tx, month, group, owned, sc)
		if err != nil {
			return err
		}
		var rows []EventRow
		for i, own := range owned {
			if refusals[i] == nil {
				rows = append(rows, own...)
			}
		}
		for i := range rows {
			rows[i].ReceivedAt = now
		}
		late := map[dayMark]bool{}
		inserted, err := storeEvents(ctx, tx, rows, late)
		if err != nil {
			return err
		}
		added := make(map[string]int64)
		for _, k := range inserted {
			outcomes[owner[k]].Accepted++
			added[k.orgID]++
		}
		var admitted []scores.Row
		for i := range sc.kept {
			if refusals[sc.owner[scores.KeyOf(&sc.kept[i])]] == nil {
				admitted = append(admitted, sc.kept[i])
			}
		}
		written, err := tx.upsertScores(ctx, admitted, now)
		if err != nil {
			return err
		}
		late, err = lateScoreDays(ctx, tx, written, now, late)
		if err != nil {
			return err
		}
		if err := markLate(ctx, tx, late); err != nil {
			return err
		}
		// A replaced score is accepted but never counted twice.
		for _, w := range written {
			outcomes[sc.owner[w.Key]].Accepted++
			if w.New {
				added[w.Key.OrgID]++
			}
		}
		return tx.addUsage(ctx, month, usageDeltas(group, added, slot))
	})
	telemetry.IngestGroupRows.WithLabelValues().Observe(float64(countRows(group)))
	telemetry.IngestCommitSeconds.WithLabelValues(commitOutcome(err)).Observe(time.Since(started).Seconds())
	if err != nil {
		err = classify(fmt.Errorf("commit %d records: %w", countRows(group), err))
	}
	w.answering()
	for i, r := range group {
		switch {
		case err != nil:
			r.done <- result{err: err}
		case refusals[i] != nil:
			r.done <- result{err: refusals[i]}
		default:
			o := outcomes[i]
			o.Duplicates = r.batch.size() - o.Accepted
			telemetry.IngestEvents.WithLabelValues(telemetry.Accepted).Add(float64(o.Accepted))
			telemetry.IngestEvents.WithLabelValues(telemetry.Duplicate).Add(float64(o.Duplicates))
			r.done <- result{outcome: o}
		}
	}
}

func commitOutcome(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// splitOwnership gives each (org, event_id) of the group to the first
// request that carries it: later copies (a retry racing the original, a
// repeated id in one batch) are that request's duplicates.
func splitOwnership(group []*request) ([][]EventRow, map[eventKey]int) {
	owned := make([][]EventRow, len(group))
	owner := make(map[eventKey]int, countRows(group))
	for i, r := range group {
		for j := range r.batch.Rows {
			k := keyOf(&r.batch.Rows[j])
			if _, taken := owner[k]; taken {
				continue
			}
			owner[k] = i
			owned[i] = append(owned[i], r.batch.Rows[j])
		}
	}
	return owned, owner
}

// groupScores are the scores a group stores: of those sharing a key, the
// latest (scores.Latest), each owned by the request that sent it.
type groupScores struct {
	kept  []scores.Row       // sorted by key
	owner map[scores.Key]int // key -> index of its request in the group
	mine  [][]scores.Row     // the kept rows of each request
}

func splitScores(group []*request) groupScores {
	var all []scores.Row
	var from []int
	for i, r := range group {
		all = append(all, r.batch.Scores...)
		for range r.batch.Scores {
			from = append(from, i)
		}
	}
	g := groupScores{owner: make(map[scores.Key]int), mine: make([][]scores.Row, len(group))}
	if len(all) == 0 {
		return g
	}
	kept, won := scores.Latest(all)
	for i := range all {
		if won[i] {
			g.owner[scores.KeyOf(&all[i])] = from[i]
		}
	}
	g.kept = kept
	for i := range kept {
		j := g.owner[scores.KeyOf(&kept[i])]
		g.mine[j] = append(g.mine[j], kept[i])
	}
	return g
}

func countRows(group []*request) int {
	n := 0
	for _, r := range group {
		n += r.batch.size()
	}
	return n
}

// usageDelta is what one group adds to one usage row.
type usageDelta struct {
	orgID  string
	slot   int
	events int64
}

// usageDeltas are the group's additions to the month's usage rows, sorted
// by org (so transactions lock rows in one order). An org with a finite
// allowance counts in slot 0, the row lockUsage holds while the allowance
// is checked; one without counts in the group's slot (docs/ingest.md,
// "Monthly event allowance").
func usageDeltas(group []*request, added map[string]int64, slot int) []usageDelta {
	finite := make(map[string]bool)
	for _, r := range group {
		if r.batch.Tenant.Allowance() != plans.Unlimited {
			finite[r.batch.Tenant.OrgID] = true
		}
	}
	out := make([]usageDelta, 0, len(added))
	for org, n := range added {
		d := usageDelta{orgID: org, slot: slot, events: n}
		if finite[org] {
			d.slot = 0
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b usageDelta) int { return strings.Compare(a.orgID, b.orgID) })
	return out
}
