package ratelimit

import (
	"testing"
	"time"

	"github.com/expd/expd/plans"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                   { return &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }
func allowN(l *Limiter, key string, p plans.Name, n int) int {
	ok := 0
	for i := 0; i < n; i++ {
		if allowed, _ := l.Allow(key, p); allowed {
			ok++
		}
	}
	return ok
}

func TestBurstThenRefillAtThePlanRate(t *testing.T) {
	c := newClock()
	l := New(nil, c.now)
	free := plans.Get(plans.Free)
	if got := allowN(l, "org-a", plans.Free, free.Burst+10); got != free.Burst {
		t.Fatalf("allowed %d in a burst, want the free burst %d", got, free.Burst)
	}
	ok, wait := l.Allow("org-a", plans.Free)
	if ok || wait <= 0 || wait > time.Second/time.Duration(free.RequestsPerSecond)+time.Nanosecond {
		t.Fatalf("empty bucket: ok %v, retry after %s; want a wait of one token (%s)", ok, wait, time.Second/time.Duration(free.RequestsPerSecond))
	}
	c.advance(time.Second)
	if got := allowN(l, "org-a", plans.Free, 1000); got != int(free.RequestsPerSecond) {
		t.Fatalf("after 1 s allowed %d, want %v", got, free.RequestsPerSecond)
	}
	// Another key has its own bucket.
	if got := allowN(l, "org-b", plans.Free, 1); got != 1 {
		t.Fatal("org-b was limited by org-a's traffic")
	}
}

func TestPlansGetTheirOwnRates(t *testing.T) {
	l := New(nil, newClock().now)
	for _, p := range plans.All() {
		if r := l.RateOf(p.Plan); r.PerSecond != p.RequestsPerSecond || r.Burst != p.Burst {
			t.Fatalf("%s: rate %+v, want the plan table's %v/%d", p.Plan, r, p.RequestsPerSecond, p.Burst)
		}
	}
	if l.RateOf("no-such-plan") != l.RateOf(plans.Free) {
		t.Fatal("an unknown plan should be limited as free")
	}
}

func TestOverrides(t *testing.T) {
	o, err := ParseOverrides(" *=5:10, pro=1.5:3 ,enterprise=off")
	if err != nil {
		t.Fatal(err)
	}
	c := newClock()
	l := New(o, c.now)
	if r := l.RateOf(plans.Free); r != (Rate{5, 10}) {
		t.Fatalf("free from *: %+v", r)
	}
	if r := l.RateOf(plans.Pro); r != (Rate{1.5, 3}) {
		t.Fatalf("named pro wins over *: %+v", r)
	}
	if got := allowN(l, "big", plans.Enterprise, 100_000); got != 100_000 {
		t.Fatalf("enterprise=off allowed %d of 100000", got)
	}
	if got := allowN(l, "small", plans.Pro, 10); got != 3 {
		t.Fatalf("pro burst 3 allowed %d", got)
	}
	for _, bad := range []string{"free", "free=1", "free=0:1", "free=1:0", "gold=1:1", "free=x:1", "free=1:1.5"} {
		if _, err := ParseOverrides(bad); err == nil {
			t.Errorf("ParseOverrides(%q) accepted a bad spec", bad)
		}
	}
	if o, err := ParseOverrides(""); err != nil || len(o) != 0 {
		t.Fatalf("empty spec: %v, %v", o, err)
	}
}
