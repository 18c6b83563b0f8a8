package erasure_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/erasure"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/secrets"
)

func keyring(t *testing.T, previous string) (*secrets.Keyring, string) {
	t.Helper()
	k, err := secrets.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	ring, err := secrets.Parse(k, previous)
	if err != nil {
		t.Fatal(err)
	}
	return ring, k
}

// The row keeps the user id sealed while the erasure runs and only its
// hash afterwards; a second request while it runs is the same erasure;
// the tombstone matches the org's user for TombstoneTTL, under the
// previous key too during a rotation, and never another org's.
func TestErasureRowLifecycleAndTombstone(t *testing.T) {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	other := testenv.NewOrg(t, db, testenv.Signer(t))
	ring, oldKey := keyring(t, "")
	ctx, now := t.Context(), time.Now()

	v, created, err := erasure.Create(ctx, db, ring, org.ID, "alice@example.com", "user_1", now)
	if err != nil || !created || v.State != erasure.StateRunning || len(v.Removed) != len(erasure.Tables) {
		t.Fatalf("Create = %+v, %v, %v", v, created, err)
	}
	again, created, err := erasure.Create(ctx, db, ring, org.ID, "alice@example.com", "user_1", now)
	if err != nil || created || again.ID != v.ID {
		t.Fatalf("second Create while running = %+v, %v, %v; want the running one", again, created, err)
	}
	if _, err := erasure.Get(ctx, db, other.ID, v.ID); !errors.Is(err, erasure.ErrNotFound) {
		t.Fatalf("another org's Get: %v", err)
	}
	sub, err := erasure.Open(ctx, db, ring, v.ID)
	if err != nil || sub.UserID != "alice@example.com" || sub.OrgID != org.ID {
		t.Fatalf("Open = %+v, %v", sub, err)
	}
	var sealed string
	db.Raw(`SELECT user_id_sealed FROM erasures WHERE id = ?`, v.ID).Scan(&sealed)
	if sealed == "" || sealed == "alice@example.com" {
		t.Fatalf("stored user id %q, want it sealed", sealed)
	}
	if err := erasure.AddRemoved(ctx, db, v.ID, erasure.TableEvents, 7); err != nil {
		t.Fatal(err)
	}
	if err := erasure.AddRemoved(ctx, db, v.ID, erasure.TableEvents, 0); err != nil {
		t.Fatal(err)
	}
	done, err := erasure.Complete(ctx, db, v.ID, "erasure/x", now)
	if err != nil || done.State != erasure.StateCompleted || done.Removed[erasure.TableEvents] != 7 || done.CompletedAt == nil {
		t.Fatalf("Complete = %+v, %v", done, err)
	}
	if _, err := erasure.Complete(ctx, db, v.ID, "erasure/x", now); err != nil {
		t.Fatalf("Complete again: %v", err)
	}
	if _, err := erasure.Open(ctx, db, ring, v.ID); !errors.Is(err, erasure.ErrDone) {
		t.Fatalf("Open after completion: %v, want ErrDone", err)
	}
	var audits int64
	db.Raw(`SELECT count(*) FROM audit_log WHERE org_id = ? AND action = ?`, org.ID, "erasure.completed").Scan(&audits)
	if audits != 1 {
		t.Fatalf("%d erasure.completed entries, want 1", audits)
	}

	users := []string{"alice@example.com", "bob"}
	// A fresh cache per check: each reads the table.
	erased := func(ring *secrets.Keyring, orgID string, at time.Time) (map[string]bool, error) {
		var c erasure.Tombstones
		return c.Erased(ctx, ring, orgID, users, at, recent(db))
	}
	if got, err := erased(ring, org.ID, now.Add(time.Hour)); err != nil || !got["alice@example.com"] || got["bob"] {
		t.Fatalf("Erased = %v, %v", got, err)
	}
	if got, _ := erased(ring, other.ID, now); len(got) != 0 {
		t.Fatalf("another org's Erased = %v", got)
	}
	if got, _ := erased(ring, org.ID, now.Add(erasure.TombstoneTTL+time.Minute)); len(got) != 0 {
		t.Fatalf("Erased past the TTL = %v", got)
	}
	rotated, _ := keyring(t, oldKey)
	if got, _ := erased(rotated, org.ID, now); !got["alice@example.com"] {
		t.Fatalf("Erased after a rotation (previous key kept) = %v", got)
	}
	fresh, _ := keyring(t, "")
	if got, _ := erased(fresh, org.ID, now); len(got) != 0 {
		t.Fatalf("Erased under an unrelated key = %v", got)
	}
	if got, err := erased(&secrets.Keyring{}, org.ID, now); err != nil || got != nil {
		t.Fatalf("Erased without a key = %v, %v", got, err)
	}
}

func recent(db *gorm.DB) erasure.Loader {
	return func(ctx context.Context, orgID string, since time.Time) ([]erasure.Tombstone, error) {
		return erasure.Recent(ctx, db, orgID, since)
	}
}

// The cached tombstones are read once while fresh, and again at once
// when an erasure of the org is requested or completed in this process:
// the user is dropped from the next batch on, not a TombstoneMaxAge
// later. Another org's erasure does not make this org's set stale.
func TestTombstonesReadAgainWhenAnErasureIsMadeHere(t *testing.T) {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	other := testenv.NewOrg(t, db, testenv.Signer(t))
	ring, _ := keyring(t, "")
	ctx, now := t.Context(), time.Now()
	reads := 0
	load := func(ctx context.Context, orgID string, since time.Time) ([]erasure.Tombstone, error) {
		reads++
		return erasure.Recent(ctx, db, orgID, since)
	}
	var c erasure.Tombstones
	check := func(want bool, wantReads int) {
		t.Helper()
		got, err := c.Erased(ctx, ring, org.ID, []string{"carol"}, now, load)
		if err != nil || got["carol"] != want || reads != wantReads {
			t.Fatalf("Erased = %v, %v after %d reads; want carol %v after %d", got, err, reads, want, wantReads)
		}
	}
	check(false, 1)
	check(false, 1)
	if _, _, err := erasure.Create(ctx, db, ring, other.ID, "carol", "user_1", now); err != nil {
		t.Fatal(err)
	}
	check(false, 1)
	v, _, err := erasure.Create(ctx, db, ring, org.ID, "carol", "user_1", now)
	if err != nil {
		t.Fatal(err)
	}
	check(true, 2)
	check(true, 2)
	if _, err := erasure.Complete(ctx, db, v.ID, "erasure/x", now); err != nil {
		t.Fatal(err)
	}
	check(true, 3)
}
