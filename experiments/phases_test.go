package experiments_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/internal/testenv"
)

func TestAllocationChanged(t *testing.T) {
	base := testenv.ExperimentConfig("a")
	base.Allocation = []bucketing.Slice{{Variant: "control", Weight: 50}, {Variant: "treatment", Weight: 50}}
	with := func(edit func(*experiments.Config)) experiments.Config {
		c := base
		c.Allocation = append([]bucketing.Slice(nil), base.Allocation...)
		edit(&c)
		return c
	}
	for _, c := range []struct {
		name    string
		cfg     experiments.Config
		changed bool
	}{
		{"same", with(func(*experiments.Config) {}), false},
		{"proportional weights", with(func(c *experiments.Config) { c.Allocation[0].Weight, c.Allocation[1].Weight = 1, 1 }), false},
		{"another description", with(func(c *experiments.Config) { c.Description = "x" }), false},
		{"targeting spelled otherwise", with(func(c *experiments.Config) { c.Targeting = json.RawMessage(` null `) }), false},
		{"ramp", with(func(c *experiments.Config) { c.Allocation[0].Weight, c.Allocation[1].Weight = 20, 80 }), true},
		{"variant added", with(func(c *experiments.Config) {
			c.Allocation = append(c.Allocation, bucketing.Slice{Variant: "third", Weight: 0})
		}), true},
		{"variant removed", with(func(c *experiments.Config) { c.Allocation = c.Allocation[:1] }), true},
		{"targeting", with(func(c *experiments.Config) { c.Targeting = json.RawMessage(`{"plan": "pro"}`) }), true},
	} {
		if got := experiments.AllocationChanged(base, c.cfg); got != c.changed {
			t.Errorf("%s: AllocationChanged = %v; want %v", c.name, got, c.changed)
		}
	}
	a := with(func(c *experiments.Config) { c.Targeting = json.RawMessage(`{"plan": "pro", "country": "fr"}`) })
	b := with(func(c *experiments.Config) { c.Targeting = json.RawMessage(`{ "country":"fr","plan":"pro" }`) })
	if experiments.AllocationChanged(a, b) {
		t.Error("the same targeting condition with its keys in another order is no change")
	}
}

// Phases follow the stored versions: a description edit stays in its
// phase, a ramp starts the next; the window cuts them and keeps their
// numbers.
func TestPhasesFromVersions(t *testing.T) {
	s, org, other := newStore(t)
	exp := create(t, s, org, testenv.ExperimentConfig("phased"))
	cfg := exp.Config
	cfg.Description = "edited"
	if _, err := s.Update(ctx, org, exp.ID, actor, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Allocation = []bucketing.Slice{{Variant: cfg.Allocation[0].Variant, Weight: 20}, {Variant: cfg.Allocation[1].Variant, Weight: 80}}
	if _, err := s.Update(ctx, org, exp.ID, actor, cfg); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().UTC().Add(-72 * time.Hour).Truncate(time.Second)
	for v, at := range map[int]time.Time{1: t0, 2: t0.Add(24 * time.Hour), 3: t0.Add(48 * time.Hour)} {
		if err := s.DB.Model(&experiments.VersionRow{}).Where("experiment_id = ? AND version = ?", exp.ID, v).Update("created_at", at).Error; err != nil {
			t.Fatal(err)
		}
	}
	end := t0.Add(72 * time.Hour)
	// Phases in [from, to) as package phases reads them (no holdouts here).
	phasesIn := func(org string, from, to time.Time) ([]experiments.Phase, error) {
		_, all, err := s.AllocationPhases(ctx, org, exp.ID, to)
		return experiments.Cut(all, from, to), err
	}
	ph, err := phasesIn(org, t0, end)
	if err != nil {
		t.Fatal(err)
	}
	if len(ph) != 2 || ph[0].Number != 1 || ph[0].Version != 1 || !ph[0].Start.Equal(t0) || !ph[0].End.Equal(t0.Add(48*time.Hour)) ||
		ph[1].Number != 2 || ph[1].Version != 3 || !ph[1].Start.Equal(t0.Add(48*time.Hour)) || !ph[1].End.Equal(end) ||
		ph[0].Weights[cfg.Allocation[1].Variant] != 50 || ph[1].Weights[cfg.Allocation[1].Variant] != 80 {
		t.Fatalf("phases %+v; want v1 (the edit in it) to 48 h, then v3 at 20/80", ph)
	}
	if k := experiments.PhaseAt(ph, t0.Add(48*time.Hour)); k != 1 {
		t.Errorf("the change's instant is in phase index %d; want 1 (starts are inclusive)", k)
	}
	if k := experiments.PhaseAt(ph, t0.Add(48*time.Hour-time.Millisecond)); k != 0 {
		t.Errorf("a millisecond before the change is in phase index %d; want 0", k)
	}
	// A window after the change: one phase, still number 2.
	late, err := phasesIn(org, t0.Add(60*time.Hour), end)
	if err != nil || len(late) != 1 || late[0].Number != 2 || !late[0].Start.Equal(t0.Add(60*time.Hour)) {
		t.Errorf("late window: %+v, %v; want phase 2 cut to the window", late, err)
	}
	// A window ending before the ramp: the ramp is not in force yet.
	early, err := phasesIn(org, t0, t0.Add(30*time.Hour))
	if err != nil || len(early) != 1 || early[0].Number != 1 || !early[0].End.Equal(t0.Add(30*time.Hour)) {
		t.Errorf("early window: %+v, %v; want phase 1 only", early, err)
	}
	if _, err := phasesIn(other, t0, end); err == nil {
		t.Error("another org read the experiment's phases")
	}
}
