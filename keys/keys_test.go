package keys_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/keys"
)

var ctx = context.Background()

// newOrgs is a fresh database with two orgs (each with both keys issued).
func newOrgs(t *testing.T) (*gorm.DB, testenv.Org, testenv.Org) {
	t.Helper()
	db := testenv.DB(t)
	return db, testenv.NewOrg(t, db, testenv.Signer(t)), testenv.NewOrg(t, db, testenv.Signer(t))
}

func live(t *testing.T, db *gorm.DB, org, plain string) bool {
	t.Helper()
	ok, err := keys.IsLive(ctx, db, org, plain)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestRotationLeavesOneLiveKeyPerScope(t *testing.T) {
	db, org, _ := newOrgs(t)
	next, err := keys.Issue(ctx, db, org.ID, auth.Publishable, "admin")
	if err != nil {
		t.Fatal(err)
	}
	if live(t, db, org.ID, org.PublishableKey) || !live(t, db, org.ID, next) {
		t.Fatal("after rotation the old publishable key is live or the new one is not")
	}
	if !live(t, db, org.ID, org.SecretKey) {
		t.Fatal("rotating the publishable key revoked the secret key")
	}
	if got, err := keys.OrgOfKey(ctx, db, org.PublishableKey); err != nil || got != "" {
		t.Fatalf("the revoked key still names org %q, %v", got, err)
	}
	if got, err := keys.OrgOfKey(ctx, db, next); err != nil || got != org.ID {
		t.Fatalf("the new key names org %q, %v", got, err)
	}
	// Only the live publishable key can be read again; a revoked key's
	// plaintext is dropped with it.
	if plain, _, err := keys.Publishable(ctx, db, org.ID); err != nil || plain != next {
		t.Fatalf("publishable key reads %.12s…, %v", plain, err)
	}
	if n := keptPlaintexts(t, db, org.ID); n != 1 {
		t.Fatalf("%d publishable plaintexts kept, want 1", n)
	}
	var audited int64
	if err := db.Raw("SELECT COUNT(*) FROM key_audit WHERE org_id = ? AND scope = ? AND action = 'revoked'", org.ID, auth.Publishable).Scan(&audited).Error; err != nil || audited != 1 {
		t.Fatalf("%d revocations audited, %v", audited, err)
	}
}

func TestStoreIsIdempotent(t *testing.T) {
	db, org, other := newOrgs(t)
	k, err := auth.GenerateKey(auth.Secret)
	if err != nil {
		t.Fatal(err)
	}
	in := keys.StoreInput{OrgID: org.ID, Scope: auth.Secret, Hash: k.Hash, Prefix: k.Prefix, Actor: "admin"}
	first, err := keys.Store(ctx, db, in)
	if err != nil || len(first.RevokedIDs) != 1 {
		t.Fatalf("first store revoked %v, %v", first.RevokedIDs, err)
	}
	again, err := keys.Store(ctx, db, in)
	if err != nil || again.KeyID != first.KeyID || !sameMicrosecond(again.CreatedAt, first.CreatedAt) || len(again.RevokedIDs) != 0 {
		t.Fatalf("a retried store gave %+v (first %+v), %v", again, first, err)
	}
	if !live(t, db, org.ID, k.Plain) {
		t.Fatal("a retried store revoked the key it stored")
	}
	// A hash is one org's and one scope's.
	theirs := in
	theirs.OrgID = other.ID
	if _, err := keys.Store(ctx, db, theirs); err == nil {
		t.Fatal("another org stored a hash this org holds")
	}
	if !live(t, db, other.ID, other.SecretKey) {
		t.Fatal("the refused store revoked the other org's key")
	}
}

func TestKeysAreScopedToTheirOrg(t *testing.T) {
	db, org, other := newOrgs(t)
	if live(t, db, other.ID, org.SecretKey) {
		t.Fatal("one org's key is live for another")
	}
	if live(t, db, org.ID, "") {
		t.Fatal("an empty key is live")
	}
	if got, err := keys.OrgOfKey(ctx, db, "sk_live_unknown"); err != nil || got != "" {
		t.Fatalf("an unknown key names org %q, %v", got, err)
	}
	mine, _, _ := keys.Publishable(ctx, db, org.ID)
	theirs, _, _ := keys.Publishable(ctx, db, other.ID)
	if mine != org.PublishableKey || theirs != other.PublishableKey {
		t.Fatal("an org reads another org's publishable key")
	}
}

func TestKeepPublishableOnlyForALiveKey(t *testing.T) {
	db, org, _ := newOrgs(t)
	k, err := auth.GenerateKey(auth.Publishable)
	if err != nil {
		t.Fatal(err)
	}
	// Stored by hash only, as the rotation workflow does.
	if _, err := keys.Store(ctx, db, keys.StoreInput{OrgID: org.ID, Scope: auth.Publishable, Hash: k.Hash, Prefix: k.Prefix}); err != nil {
		t.Fatal(err)
	}
	if plain, _, err := keys.Publishable(ctx, db, org.ID); err != nil || plain != "" {
		t.Fatalf("a key stored by hash reads %.12s…, %v", plain, err)
	}
	if err := keys.KeepPublishable(ctx, db, k); err != nil {
		t.Fatal(err)
	}
	if plain, _, _ := keys.Publishable(ctx, db, org.ID); plain != k.Plain {
		t.Fatal("the kept plaintext does not read back")
	}
	// The original key is revoked: keeping its plaintext again does nothing.
	old := auth.NewKey{Plain: org.PublishableKey, Hash: auth.HashKey(org.PublishableKey), Prefix: "old"}
	if err := keys.KeepPublishable(ctx, db, old); err != nil {
		t.Fatal(err)
	}
	if plain, _, _ := keys.Publishable(ctx, db, org.ID); plain != k.Plain {
		t.Fatal("a revoked key's plaintext was kept")
	}
	if n := keptPlaintexts(t, db, org.ID); n != 1 {
		t.Fatalf("%d publishable plaintexts kept, want 1", n)
	}
}

// keptPlaintexts counts the org's keys whose plaintext can be read again.
func keptPlaintexts(t *testing.T, db *gorm.DB, org string) int64 {
	t.Helper()
	var n int64
	if err := db.Raw("SELECT COUNT(*) FROM api_keys WHERE org_id = ? AND publishable IS NOT NULL", org).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// sameMicrosecond compares instants at PostgreSQL's timestamp precision.
func sameMicrosecond(a, b time.Time) bool {
	return a.Truncate(time.Microsecond).Equal(b.Truncate(time.Microsecond))
}
