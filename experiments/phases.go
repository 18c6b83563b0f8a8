package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/expd/expd/bucketing"
)

// Phase is a span of an experiment's life under one allocation and one set
// of holdout shares: it starts with the version that changed the
// allocation (AllocationChanged) or with a holdout's change, and lasts
// until the next such change (docs/results.md, "Phases"). Users
// first exposed in a phase were assigned by its weights.
type Phase struct {
	// Number counts the experiment's phases from 1 over its whole life,
	// so a phase keeps its number in every run's window.
	Number int       `json:"phase"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"` // exclusive
	// Version is the config version that started the phase (later
	// versions that left the allocation alone belong to it too).
	Version int `json:"experiment_version"`
	// Weights by variant, as the allocation of Version has them.
	Weights map[string]float64 `json:"weights"`
	// Holdouts: the percent each holdout covering the experiment held
	// out during the phase, by holdout id (absent when none covers it).
	// A change of one starts a phase, as an allocation change does: it
	// changes who enters.
	Holdouts   map[string]float64 `json:"holdouts,omitempty"`
	Allocation []bucketing.Slice  `json:"-"`
}

// AllocationChanged tells whether going from config a to b changes who is
// assigned where: a variant added or removed, a variant's share of the
// total weight changed, or the targeting condition changed. Proportional
// weights (50/50 and 1/1) are the same allocation.
func AllocationChanged(a, b Config) bool {
	sa, sb := shares(a.Allocation), shares(b.Allocation)
	if len(sa) != len(sb) {
		return true
	}
	for v, x := range sa {
		y, ok := sb[v]
		if !ok || math.Abs(x-y) > 1e-12 {
			return true
		}
	}
	return !bytes.Equal(canonicalJSON(a.Targeting), canonicalJSON(b.Targeting))
}

// shares is each variant's share of the allocation's total weight.
func shares(alloc []bucketing.Slice) map[string]float64 {
	var total float64
	for _, s := range alloc {
		total += s.Weight
	}
	out := make(map[string]float64, len(alloc))
	for _, s := range alloc {
		if total > 0 {
			out[s.Variant] = s.Weight / total
		} else {
			out[s.Variant] = 0
		}
	}
	return out
}

// canonicalJSON re-encodes a JSON document with sorted keys and no
// spacing, so two spellings of one condition compare equal; null and
// absent are both nil.
func canonicalJSON(raw json.RawMessage) []byte {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

// AllocationPhases returns the layer of the experiment ("" when none)
// and its phases under allocation changes over its whole life until to,
// oldest first, derived from its stored versions and the instants they
// were created (versions created at or after to are not yet in force, as
// for VersionAt). Package phases cuts them further at holdout changes and
// to a window: that is what every reader of phases calls.
func (s Store) AllocationPhases(ctx context.Context, orgID, idOrName string, to time.Time) (string, []Phase, error) {
	db := s.DB.WithContext(ctx)
	exp, err := find(db, orgID, idOrName)
	if err != nil {
		return "", nil, err
	}
	var rows []VersionRow
	if err := db.Select("version", "config", "created_at").Where("experiment_id = ? AND created_at < ?", exp.ID, to).
		Order("version").Find(&rows).Error; err != nil {
		return "", nil, fmt.Errorf("load versions of %s: %w", exp.ID, err)
	}
	var all []Phase
	var prev Config
	for i, r := range rows {
		var cfg Config
		if err := json.Unmarshal(r.Config, &cfg); err != nil {
			return "", nil, fmt.Errorf("decode config of %s v%d: %w", exp.ID, r.Version, err)
		}
		if i == 0 || AllocationChanged(prev, cfg) {
			if n := len(all); n > 0 {
				all[n-1].End = r.CreatedAt.UTC()
			}
			all = append(all, Phase{Number: len(all) + 1, Start: r.CreatedAt.UTC(), End: to.UTC(), Version: r.Version,
				Weights: weights(cfg.Allocation), Allocation: cfg.Allocation})
		}
		prev = cfg
	}
	var layer string
	if exp.LayerID != nil {
		layer = *exp.LayerID
	}
	return layer, all, nil
}

// Cut returns the phases of all (contiguous, oldest first) that overlap
// [from, to), cut to it: every instant of [from, to) at or after the
// experiment's creation falls in exactly one of them.
func Cut(all []Phase, from, to time.Time) []Phase {
	out := make([]Phase, 0, len(all))
	for _, p := range all {
		if !p.End.After(from) || !p.Start.Before(to) {
			continue
		}
		if p.Start.Before(from) {
			p.Start = from.UTC()
		}
		if p.End.After(to) {
			p.End = to.UTC()
		}
		out = append(out, p)
	}
	return out
}

func weights(alloc []bucketing.Slice) map[string]float64 {
	out := make(map[string]float64, len(alloc))
	for _, s := range alloc {
		out[s.Variant] = s.Weight
	}
	return out
}

// PhaseAt is the index in phases (sorted, contiguous, as Phases returns
// them) of the phase holding instant t; the first phase for an instant
// before it, the last for one after.
func PhaseAt(phases []Phase, t time.Time) int {
	i := sort.Search(len(phases), func(i int) bool { return phases[i].End.After(t) })
	return min(i, len(phases)-1)
}
