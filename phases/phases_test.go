package phases_test

import (
	"maps"
	"testing"
	"time"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/holdouts"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/layers"
	"github.com/expd/expd/phases"
)

// Split cuts at shares strictly inside a phase, takes in earlier ones at
// the phase's start, and numbers the pieces from 1.
func TestSplit(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
	all := []experiments.Phase{
		{Number: 1, Start: h(0), End: h(10), Version: 1},
		{Number: 2, Start: h(10), End: h(20), Version: 3},
	}
	shares := []holdouts.Share{
		{HoldoutID: "a", Percent: 5, At: h(-5)}, // before the experiment: in force from its start
		{HoldoutID: "b", Percent: 1, At: h(4)},  // inside phase 1: a cut
		{HoldoutID: "a", Percent: 8, At: h(4)},  // the same instant: one cut
		{HoldoutID: "b", Percent: 2, At: h(10)}, // on a boundary: no cut, in force in phase 2
		{HoldoutID: "a", Percent: 9, At: h(15)}, // inside phase 2
	}
	got := phases.Split(all, shares)
	want := []struct {
		start, end int
		version    int
		held       map[string]float64
	}{
		{0, 4, 1, map[string]float64{"a": 5}},
		{4, 10, 1, map[string]float64{"a": 8, "b": 1}},
		{10, 15, 3, map[string]float64{"a": 8, "b": 2}},
		{15, 20, 3, map[string]float64{"a": 9, "b": 2}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d phases %+v; want %d", len(got), got, len(want))
	}
	for i, w := range want {
		p := got[i]
		if p.Number != i+1 || !p.Start.Equal(h(w.start)) || !p.End.Equal(h(w.end)) || p.Version != w.version || !maps.Equal(p.Holdouts, w.held) {
			t.Errorf("phase %d = %+v; want #%d [%dh, %dh) v%d holdouts %v", i, p, i+1, w.start, w.end, w.version, w.held)
		}
	}
	if got := phases.Split(all, nil); len(got) != 2 || got[0].Holdouts != nil {
		t.Errorf("without holdouts: %+v; want the allocation phases, no holdouts", got)
	}
}

// A holdout created over a running experiment, and its percent changed,
// each start a phase in the experiments it covers and in no other: an
// org-wide holdout covers every experiment, a layer's only that layer's.
func TestHoldoutChangesStartPhases(t *testing.T) {
	ctx := t.Context()
	db := testenv.DB(t)
	signer := testenv.Signer(t)
	org, other := testenv.NewOrg(t, db, signer).ID, testenv.NewOrg(t, db, signer).ID
	t0 := time.Now().UTC().Add(-72 * time.Hour).Truncate(time.Second)
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }

	layer, err := layers.Store{DB: db}.Create(ctx, org, "u", layers.Spec{Name: "chat", Salt: "chat-layer-salt"}, at(0))
	if err != nil {
		t.Fatal(err)
	}
	es := experiments.Store{DB: db}
	create := func(name string, placed bool) experiments.Experiment {
		cfg := testenv.ExperimentConfig(name)
		if placed {
			cfg.Layer = &experiments.LayerPlacement{ID: layer.ID, Range: []float64{0, 0.5}}
		}
		exp, err := es.Create(ctx, org, "u", cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Model(&experiments.VersionRow{}).Where("experiment_id = ?", exp.ID).Update("created_at", t0).Error; err != nil {
			t.Fatal(err)
		}
		return exp
	}
	plain, placed := create("plain", false), create("placed", true)

	hs := holdouts.Store{DB: db}
	pct := func(p float64) *float64 { return &p }
	wide, err := hs.Create(ctx, org, "u", holdouts.Spec{Name: "q4", Salt: "q4-holdout-salt", Percent: pct(5), Metrics: []experiments.Metric{}}, at(24))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hs.Create(ctx, org, "u", holdouts.Spec{Name: "chat-q4", Salt: "chat-holdout-salt", Percent: pct(2), LayerID: &layer.ID, Metrics: []experiments.Metric{}}, at(36)); err != nil {
		t.Fatal(err)
	}
	// A rename keeps the share (no phase); a new percent starts one.
	if _, err := hs.Update(ctx, org, wide.ID, "u", holdouts.Spec{Name: "q4-renamed", Percent: pct(5), Metrics: []experiments.Metric{}}, at(40)); err != nil {
		t.Fatal(err)
	}
	if _, err := hs.Update(ctx, org, wide.ID, "u", holdouts.Spec{Name: "q4-renamed", Percent: pct(10), Metrics: []experiments.Metric{}}, at(48)); err != nil {
		t.Fatal(err)
	}
	// Another org's holdout cuts nothing here.
	if _, err := hs.Create(ctx, other, "u", holdouts.Spec{Name: "q4", Salt: "q4-holdout-salt", Percent: pct(5), Metrics: []experiments.Metric{}}, at(30)); err != nil {
		t.Fatal(err)
	}

	end := at(72)
	starts := func(exp experiments.Experiment, from time.Time) []experiments.Phase {
		t.Helper()
		ph, err := phases.Of(ctx, db, org, exp.ID, from, end)
		if err != nil {
			t.Fatal(err)
		}
		return ph
	}
	ph := starts(plain, t0)
	if len(ph) != 3 || !ph[1].Start.Equal(at(24)) || !ph[2].Start.Equal(at(48)) || ph[0].Holdouts != nil ||
		ph[1].Holdouts[wide.ID] != 5 || ph[2].Holdouts[wide.ID] != 10 || len(ph[2].Holdouts) != 1 {
		t.Errorf("plain experiment's phases %+v; want cuts at 24 h (5 %%) and 48 h (10 %%) only", ph)
	}
	ph = starts(placed, t0)
	if len(ph) != 4 || !ph[2].Start.Equal(at(36)) || len(ph[2].Holdouts) != 2 || ph[3].Number != 4 {
		t.Errorf("layer experiment's phases %+v; want cuts at 24, 36 and 48 h", ph)
	}
	// A window after the last change: one phase, numbered over the life.
	if late := starts(placed, at(50)); len(late) != 1 || late[0].Number != 4 || !late[0].Start.Equal(at(50)) {
		t.Errorf("late window %+v; want phase 4 cut to the window", late)
	}
	if _, err := phases.Of(ctx, db, other, plain.ID, t0, end); err == nil {
		t.Error("another org read the experiment's phases")
	}
}
