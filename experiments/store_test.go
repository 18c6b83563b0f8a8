package experiments_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/validate"
)

var ctx = context.Background()

const actor = "user_1"

// newStore is a store over a fresh database with two orgs.
func newStore(t *testing.T) (experiments.Store, string, string) {
	t.Helper()
	db := testenv.DB(t)
	s := testenv.Signer(t)
	return experiments.Store{DB: db}, testenv.NewOrg(t, db, s).ID, testenv.NewOrg(t, db, s).ID
}

func create(t *testing.T, s experiments.Store, org string, cfg experiments.Config) experiments.Experiment {
	t.Helper()
	exp, err := s.Create(ctx, org, actor, cfg)
	if err != nil {
		t.Fatalf("create %s: %v", cfg.Name, err)
	}
	return exp
}

func hasField(err error, field string) bool {
	for _, f := range validate.Fields(err) {
		if f.Field == field {
			return true
		}
	}
	return false
}

func TestUpdatesMintVersionsAndKeepTheOldOnes(t *testing.T) {
	s, org, _ := newStore(t)
	exp := create(t, s, org, testenv.ExperimentConfig("versions"))
	if exp.Version != 1 || exp.Status != experiments.StatusRunning || len(exp.BucketMap) == 0 {
		t.Fatalf("created %s v%d with %d bucket ranges", exp.Status, exp.Version, len(exp.BucketMap))
	}
	cfg := exp.Config
	cfg.Description = "second"
	cfg.Salt, cfg.BucketCount = "", 0 // omitted: kept
	v2, err := s.Update(ctx, org, exp.Name, actor, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if v2.Version != 2 || v2.Salt != exp.Salt || v2.BucketCount != exp.BucketCount || v2.ConfigVersion <= exp.ConfigVersion {
		t.Fatalf("update gave v%d salt %q buckets %d config version %d (was %d)", v2.Version, v2.Salt, v2.BucketCount, v2.ConfigVersion, exp.ConfigVersion)
	}
	if cv, err := experiments.ConfigVersion(ctx, s.DB, org); err != nil || cv != v2.ConfigVersion {
		t.Fatalf("org config version %d (%v), want %d", cv, err, v2.ConfigVersion)
	}
	latest, err := s.Get(ctx, org, exp.ID)
	if err != nil || latest.Version != 2 || latest.Description != "second" {
		t.Fatalf("latest: v%d %q, %v", latest.Version, latest.Description, err)
	}
	first, err := s.GetVersion(ctx, org, exp.ID, 1)
	if err != nil || first.Version != 1 || first.Description != "" {
		t.Fatalf("version 1: v%d %q, %v", first.Version, first.Description, err)
	}
	if _, err := s.GetVersion(ctx, org, exp.ID, 3); !errors.Is(err, experiments.ErrNotFound) {
		t.Fatalf("version 3: %v", err)
	}
}

func TestBucketingInputsAreFrozen(t *testing.T) {
	s, org, _ := newStore(t)
	exp := create(t, s, org, testenv.ExperimentConfig("frozen"))
	cfg := exp.Config
	cfg.Salt, cfg.BucketCount = "another-salt", 20000
	_, err := s.Update(ctx, org, exp.ID, actor, cfg)
	if !hasField(err, "salt") || !hasField(err, "bucket_count") {
		t.Fatalf("changing salt and bucket_count: %v", err)
	}
	if got, _ := s.Get(ctx, org, exp.ID); got.Version != 1 || got.Salt != exp.Salt {
		t.Fatalf("a refused update wrote v%d salt %q", got.Version, got.Salt)
	}
}

func TestWeightChangeMovesOnlyWhatItMust(t *testing.T) {
	s, org, _ := newStore(t)
	exp := create(t, s, org, testenv.ExperimentConfig("rebalance"))
	cfg := exp.Config
	cfg.Allocation[0].Weight, cfg.Allocation[1].Weight = 60, 40
	v2, err := s.Update(ctx, org, exp.ID, actor, cfg)
	if err != nil {
		t.Fatal(err)
	}
	control := func(e experiments.Experiment) map[uint32]bool {
		in := map[uint32]bool{}
		for _, r := range e.BucketMap {
			if r.Variant == "control" {
				for b := r.Start; b < r.End; b++ {
					in[b] = true
				}
			}
		}
		return in
	}
	before, after := control(exp), control(v2)
	if len(before) != 5000 || len(after) != 6000 {
		t.Fatalf("control holds %d then %d buckets, want 5000 then 6000", len(before), len(after))
	}
	for b := range before {
		if !after[b] {
			t.Fatalf("bucket %d left control although control grew", b)
		}
	}
}

func TestExperimentsAreScopedToTheirOrg(t *testing.T) {
	s, org, other := newStore(t)
	exp := create(t, s, org, testenv.ExperimentConfig("mine"))
	if _, err := s.Get(ctx, other, exp.ID); !errors.Is(err, experiments.ErrNotFound) {
		t.Fatalf("another org's get by id: %v", err)
	}
	if _, err := s.Get(ctx, other, exp.Name); !errors.Is(err, experiments.ErrNotFound) {
		t.Fatalf("another org's get by name: %v", err)
	}
	if _, err := s.Update(ctx, other, exp.ID, actor, exp.Config); !errors.Is(err, experiments.ErrNotFound) {
		t.Fatalf("another org's update: %v", err)
	}
	if _, _, err := s.Transition(ctx, other, exp.ID, experiments.Change{Action: experiments.ActionStop}); !errors.Is(err, experiments.ErrNotFound) {
		t.Fatalf("another org's transition: %v", err)
	}
	if list, err := s.List(ctx, other, ""); err != nil || len(list) != 0 {
		t.Fatalf("another org lists %d experiments, %v", len(list), err)
	}
	// Names are unique per org only.
	create(t, s, other, testenv.ExperimentConfig("mine"))
	if _, err := s.Create(ctx, org, actor, testenv.ExperimentConfig("mine")); !errors.Is(err, experiments.ErrNameTaken) {
		t.Fatalf("a second experiment named mine: %v", err)
	}
	second := create(t, s, org, testenv.ExperimentConfig("second"))
	cfg := second.Config
	cfg.Name = "mine"
	if _, err := s.Update(ctx, org, second.ID, actor, cfg); !errors.Is(err, experiments.ErrNameTaken) {
		t.Fatalf("renaming onto a taken name: %v", err)
	}
	if list, err := s.List(ctx, org, experiments.StatusRunning); err != nil || len(list) != 2 || list[0].ID != second.ID {
		t.Fatalf("org lists %d running experiments (newest first), %v", len(list), err)
	}
}

func TestTransitions(t *testing.T) {
	s, org, _ := newStore(t)
	exp := create(t, s, org, testenv.ExperimentConfig("lifecycle"))
	stop := experiments.Change{Action: experiments.ActionStop, Actor: actor}
	stopped, changed, err := s.Transition(ctx, org, exp.ID, stop)
	if err != nil || !changed || stopped.Status != experiments.StatusStopped || stopped.Version != 2 {
		t.Fatalf("stop: %s v%d changed %v, %v", stopped.Status, stopped.Version, changed, err)
	}
	if again, changed, err := s.Transition(ctx, org, exp.ID, stop); err != nil || changed || again.Version != 2 {
		t.Fatalf("second stop: v%d changed %v, %v", again.Version, changed, err)
	}
	// A timer's change only applies from the statuses it names.
	timer := experiments.Change{Action: experiments.ActionStart, OnlyFrom: []string{experiments.StatusScheduled}}
	if _, changed, err := s.Transition(ctx, org, exp.ID, timer); err != nil || changed {
		t.Fatalf("start only from scheduled, on a stopped experiment: changed %v, %v", changed, err)
	}
	if _, _, err := s.Transition(ctx, org, exp.ID, experiments.Change{Action: experiments.ActionShip, Variant: "nope"}); !hasField(err, "variant") {
		t.Fatalf("ship of an unknown variant: %v", err)
	}
	shipped, changed, err := s.Transition(ctx, org, exp.ID, experiments.Change{Action: experiments.ActionShip, Variant: "treatment", Actor: actor})
	if err != nil || !changed || shipped.Status != experiments.StatusShipped || shipped.ShippedVariant != "treatment" {
		t.Fatalf("ship: %+v changed %v, %v", shipped.Status, changed, err)
	}
	if at, err := s.ShippedAt(ctx, org, exp.ID); err != nil || at == nil {
		t.Fatalf("shipped_at %v, %v", at, err)
	}
	for _, ch := range []experiments.Change{{Action: experiments.ActionStart}, {Action: experiments.ActionStop}, {Action: experiments.ActionShip, Variant: "control"}} {
		if _, _, err := s.Transition(ctx, org, exp.ID, ch); !experiments.IsTransitionError(err) {
			t.Fatalf("%s after ship: %v", ch.Action, err)
		}
	}
	// An update cannot unship either.
	cfg := shipped.Config
	cfg.Status = experiments.StatusRunning
	if _, err := s.Update(ctx, org, exp.ID, actor, cfg); !experiments.IsTransitionError(err) {
		t.Fatalf("update to running after ship: %v", err)
	}
}

func TestOwedSignalIsClearedOnlyForItsVersion(t *testing.T) {
	s, org, _ := newStore(t)
	cfg := testenv.ExperimentConfig("owed")
	startAt := time.Now().Add(time.Hour).UTC()
	cfg.StartAt = &startAt
	exp := create(t, s, org, cfg)
	if exp.Status != experiments.StatusScheduled || !exp.PendingStep() {
		t.Fatalf("created %s, pending step %v", exp.Status, exp.PendingStep())
	}
	if !owed(t, s, exp.ID) {
		t.Fatal("a scheduled experiment owes no signal")
	}
	cfg = exp.Config
	cfg.Description, cfg.Status = "v2", "" // the status is the lifecycle's
	v2, err := s.Update(ctx, org, exp.ID, actor, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SignalSent(ctx, org, exp.ID, exp.Version); err != nil {
		t.Fatal(err)
	}
	if !owed(t, s, exp.ID) {
		t.Fatal("a signal after version 1 cleared the debt of version 2")
	}
	if err := s.SignalSent(ctx, org, exp.ID, v2.Version); err != nil {
		t.Fatal(err)
	}
	if owed(t, s, exp.ID) {
		t.Fatal("the signal after version 2 left the debt")
	}
	// Stopping leaves nothing to arm: no signal owed.
	if _, _, err := s.Transition(ctx, org, exp.ID, experiments.Change{Action: experiments.ActionStop, Actor: actor}); err != nil {
		t.Fatal(err)
	}
	if owed(t, s, exp.ID) {
		t.Fatal("a stopped experiment owes a signal")
	}
}

func owed(t *testing.T, s experiments.Store, id string) bool {
	t.Helper()
	refs, err := s.ListSignalOwed(ctx, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		if r.ID == id {
			return true
		}
	}
	return false
}

func TestVersionAt(t *testing.T) {
	s, org, _ := newStore(t)
	exp := create(t, s, org, testenv.ExperimentConfig("at"))
	if _, err := s.VersionAt(ctx, org, exp.ID, exp.CreatedAt); !errors.Is(err, experiments.ErrNoVersionBefore) {
		t.Fatalf("version before creation: %v", err)
	}
	backdate(t, s.DB, exp.ID, 1, time.Hour)
	cfg := exp.Config
	cfg.Description = "later"
	if _, err := s.Update(ctx, org, exp.ID, actor, cfg); err != nil {
		t.Fatal(err)
	}
	v, err := s.VersionAt(ctx, org, exp.ID, time.Now().Add(-time.Minute))
	if err != nil || v.Version != 1 {
		t.Fatalf("version a minute ago: v%d, %v", v.Version, err)
	}
}

// backdate moves version n of an experiment back by d.
func backdate(t *testing.T, db *gorm.DB, experimentID string, n int, d time.Duration) {
	t.Helper()
	err := db.Exec("UPDATE experiment_versions SET created_at = ? WHERE experiment_id = ? AND version = ?", time.Now().Add(-d).UTC(), experimentID, n).Error
	if err != nil {
		t.Fatal(err)
	}
}
