package sdkcache

import (
	"testing"
	"time"

	"github.com/expd/expd/auth"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newKeys(c *clock) *Keys { return New(nil, Options{MaxAge: time.Second, Now: c.now}).Keys }

func TestKeysAreServedUntilMaxAge(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	k := newKeys(c)
	k.Remember(k.Begin(), "h1", "org-a", auth.Secret)
	if org, scope, ok := k.Lookup("h1"); !ok || org != "org-a" || scope != auth.Secret {
		t.Fatalf("Lookup = %q %q %v", org, scope, ok)
	}
	c.t = c.t.Add(999 * time.Millisecond)
	if _, _, ok := k.Lookup("h1"); !ok {
		t.Fatal("expired before MaxAge")
	}
	c.t = c.t.Add(time.Millisecond)
	if _, _, ok := k.Lookup("h1"); ok {
		t.Fatal("served at MaxAge; it must be revalidated")
	}
}

func TestForgetOrgDropsOnlyThatOrgAndStaleLookups(t *testing.T) {
	k := newKeys(&clock{t: time.Unix(1000, 0)})
	k.Remember(k.Begin(), "a1", "org-a", auth.Secret)
	k.Remember(k.Begin(), "a2", "org-a", auth.Publishable)
	k.Remember(k.Begin(), "b1", "org-b", auth.Secret)
	inFlight := k.Begin() // a lookup that started before the rotation
	k.ForgetOrg("org-a")
	for _, h := range []string{"a1", "a2"} {
		if _, _, ok := k.Lookup(h); ok {
			t.Fatalf("%s survived its org's rotation", h)
		}
	}
	if _, _, ok := k.Lookup("b1"); !ok {
		t.Fatal("another org's key was dropped")
	}
	k.Remember(inFlight, "a1", "org-a", auth.Secret)
	if _, _, ok := k.Lookup("a1"); ok {
		t.Fatal("a lookup begun before the rotation re-cached a possibly revoked key")
	}
	k.ForgetAll()
	if _, _, ok := k.Lookup("b1"); ok {
		t.Fatal("ForgetAll kept a key")
	}
}

func TestPinsAreBounded(t *testing.T) {
	p := New(nil, Options{MaxPins: 3}).Pins
	for _, u := range []string{"u1", "u2", "u3", "u4"} {
		p.Put("exp", u, "v-"+u)
	}
	kept := 0
	for _, u := range []string{"u1", "u2", "u3", "u4"} {
		if got := p.Get("exp", u); got != "" {
			kept++
			if got != "v-"+u {
				t.Fatalf("pin of %s = %q", u, got)
			}
		}
	}
	if kept != 3 || p.Get("exp", "u4") != "v-u4" {
		t.Fatalf("kept %d pins (u4 %q), want 3 including the newest", kept, p.Get("exp", "u4"))
	}
	if p.Get("other-exp", "u4") != "" {
		t.Fatal("pins leak across experiments")
	}
}
