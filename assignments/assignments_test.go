package assignments_test

import (
	"context"
	"testing"

	"gorm.io/gorm"

	"github.com/expd/expd/assignments"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/sdkcache"
)

var ctx = context.Background()

// newExperiment is a fresh database with one org and one experiment.
func newExperiment(t *testing.T) (*gorm.DB, string, string) {
	t.Helper()
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t)).ID
	exp, err := experiments.Store{DB: db}.Create(ctx, org, "user_1", testenv.ExperimentConfig("pins"))
	if err != nil {
		t.Fatal(err)
	}
	return db, org, exp.ID
}

func pinned(t *testing.T, db *gorm.DB, experimentID, user string) string {
	t.Helper()
	v, err := assignments.Pinned(ctx, db, experimentID, user)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestFirstPinWins(t *testing.T) {
	db, org, exp := newExperiment(t)
	pin := func(user, variant, source string) {
		t.Helper()
		err := assignments.PinFirst(ctx, db, []assignments.Pin{{OrgID: org, ExperimentID: exp, UserID: user, Variant: variant, Source: source}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := pinned(t, db, exp, "u1"); got != "" {
		t.Fatalf("a user never pinned is pinned to %q", got)
	}
	pin("u1", "treatment", assignments.SourceExposure)
	pin("u1", "control", assignments.SourceAssign)
	if got := pinned(t, db, exp, "u1"); got != "treatment" {
		t.Fatalf("u1 pinned to %q, want the first pin treatment", got)
	}
	pin("u0", "control", assignments.SourceAssign)
	users, err := assignments.PinnedUsers(ctx, db, exp)
	if err != nil || len(users) != 2 || users[0].UserID != "u0" || users[1].Variant != "treatment" {
		t.Fatalf("pinned users %+v, %v", users, err)
	}
	if err := assignments.PinFirst(ctx, db, nil); err != nil {
		t.Fatalf("no pins: %v", err)
	}
}

func TestCountPinnedIsScopedToTheOrg(t *testing.T) {
	db, org, exp := newExperiment(t)
	other := testenv.NewOrg(t, db, testenv.Signer(t)).ID
	var pins []assignments.Pin
	for _, u := range []string{"a", "b", "c"} {
		pins = append(pins, assignments.Pin{OrgID: org, ExperimentID: exp, UserID: u, Variant: "control", Source: assignments.SourceAssign})
	}
	if err := assignments.PinFirst(ctx, db, pins); err != nil {
		t.Fatal(err)
	}
	if n, err := assignments.CountPinned(ctx, db, org, exp); err != nil || n != 3 {
		t.Fatalf("org counts %d pins, %v", n, err)
	}
	if n, err := assignments.CountPinned(ctx, db, other, exp); err != nil || n != 0 {
		t.Fatalf("another org counts %d pins, %v", n, err)
	}
}

func TestStoredPinRecordsTheFirstAndKeepsIt(t *testing.T) {
	db, org, exp := newExperiment(t)
	cache := sdkcache.New(db, sdkcache.Options{}).Pins
	stored := func(user, first string) string {
		t.Helper()
		v, err := assignments.StoredPin(ctx, db, cache, org, exp, user, first)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// The first answer pins what was computed; later answers keep it.
	if v := stored("u1", "treatment"); v != "treatment" {
		t.Fatalf("first assignment %q", v)
	}
	if v := stored("u1", "control"); v != "treatment" {
		t.Fatalf("second assignment %q, want the pinned treatment", v)
	}
	// An exposure that pinned first wins over the computed variant, also
	// on an instance whose cache has never seen the user.
	if err := assignments.PinFirst(ctx, db, []assignments.Pin{{OrgID: org, ExperimentID: exp, UserID: "u2", Variant: "control", Source: assignments.SourceExposure}}); err != nil {
		t.Fatal(err)
	}
	if v := stored("u2", "treatment"); v != "control" {
		t.Fatalf("assignment after an exposure pin %q", v)
	}
	// A fresh cache (another instance) reads the stored pin, not first.
	other := sdkcache.New(db, sdkcache.Options{}).Pins
	if v, err := assignments.StoredPin(ctx, db, other, org, exp, "u1", "control"); err != nil || v != "treatment" {
		t.Fatalf("another instance's assignment %q, %v", v, err)
	}
	if got := pinned(t, db, exp, "u1"); got != "treatment" {
		t.Fatalf("the stored pin became %q", got)
	}
}
