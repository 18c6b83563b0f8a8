package usecases_test

import (
	"errors"
	"testing"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/keys"
	"github.com/expd/expd/workflowclient"
)

func TestRotateKeySwapsTheLiveKeyAndForgetsTheCachedOne(t *testing.T) {
	svc, org, _ := newWorkerService(t)
	old, err := keys.Issue(ctx, svc.DB, org, auth.Publishable, "setup")
	if err != nil {
		t.Fatal(err)
	}
	svc.SDK.Keys.Remember(svc.SDK.Keys.Begin(), auth.HashKey(old), org, auth.Publishable)

	k, err := svc.RotateKey(ctx, org, actor, auth.Publishable)
	if err != nil {
		t.Fatal(err)
	}
	if k.Scope != auth.Publishable || k.Plain == old || k.CreatedAt.IsZero() {
		t.Fatalf("rotated %+v", k)
	}
	for plain, want := range map[string]bool{k.Plain: true, old: false} {
		if live, err := keys.IsLive(ctx, svc.DB, org, plain); err != nil || live != want {
			t.Fatalf("key %.12s… live %v (%v), want %v", plain, live, err, want)
		}
	}
	if _, _, ok := svc.SDK.Keys.Lookup(auth.HashKey(old)); ok {
		t.Fatal("the instance's cache still answers the revoked key")
	}
	// The publishable plaintext is kept for re-reading; a secret's never.
	if plain, _, err := keys.Publishable(ctx, svc.DB, org); err != nil || plain != k.Plain {
		t.Fatalf("publishable key re-read %.12s…, %v", plain, err)
	}
	s, err := svc.RotateKey(ctx, org, actor, auth.Secret)
	if err != nil {
		t.Fatal(err)
	}
	if live, err := keys.IsLive(ctx, svc.DB, org, s.Plain); err != nil || !live {
		t.Fatalf("new secret key live %v, %v", live, err)
	}
	if plain, _, _ := keys.Publishable(ctx, svc.DB, org); plain != k.Plain {
		t.Fatal("rotating the secret key changed the publishable one")
	}
}

func TestRotateKeyWithoutTemporal(t *testing.T) {
	svc, org := newService(t, nil)
	if _, err := svc.RotateKey(ctx, org, actor, auth.Secret); !errors.Is(err, workflowclient.ErrNotConnected) {
		t.Fatalf("rotation without Temporal: %v", err)
	}
}
