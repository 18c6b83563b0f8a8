package sdkcache_test

import (
	"context"
	"testing"
	"time"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/database"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/sdkcache"
)

// A NOTIFY from one instance (here: the rotation activity's call) makes
// every listening instance forget the org's keys.
func TestListenForgetsNotifiedOrgs(t *testing.T) {
	db := testenv.DB(t)
	if !database.IsPostgres(db) {
		t.Skip("LISTEN/NOTIFY needs PostgreSQL (DATABASE_URL); SQLite runs one instance")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cache := sdkcache.New(db, sdkcache.Options{MaxAge: time.Hour})
	done := make(chan struct{})
	go func() { cache.Listen(ctx); close(done) }()

	// The listener may not be listening yet (and forgets everything when it
	// starts): notify until a notification lands, then check a fresh one.
	forgotten := func() bool {
		cache.Keys.Remember(cache.Keys.Begin(), "other", "org-b", auth.Secret)
		cache.Keys.Remember(cache.Keys.Begin(), "h", "org-a", auth.Secret)
		if err := sdkcache.NotifyKeysChanged(ctx, db, "org-a"); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if _, _, ok := cache.Keys.Lookup("h"); !ok {
				return true
			}
		}
		return false
	}
	for attempt := 0; !forgotten(); attempt++ {
		if attempt == 10 {
			t.Fatal("the notification never reached the listener")
		}
	}
	if !forgotten() {
		t.Fatal("a notification to a listening instance was not applied")
	}
	if _, _, ok := cache.Keys.Lookup("other"); !ok {
		t.Fatal("a notification about org-a dropped org-b's key")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Listen did not return after its context ended")
	}
}

func TestNotifyIsANoOpOnSQLite(t *testing.T) {
	db := testenv.DB(t)
	if database.IsPostgres(db) {
		t.Skip("SQLite only")
	}
	if err := sdkcache.NotifyKeysChanged(context.Background(), db, "org-a"); err != nil {
		t.Fatalf("notify on SQLite: %v", err)
	}
	cache := sdkcache.New(db, sdkcache.Options{})
	returned := make(chan struct{})
	go func() { cache.Listen(context.Background()); close(returned) }()
	select {
	case <-returned:
	case <-time.After(time.Second):
		t.Fatal("Listen on SQLite should return at once")
	}
}
