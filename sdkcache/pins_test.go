package sdkcache

import (
	"testing"
	"time"
)

// A cached pin is served until the max age, then read again: an erased
// user's variant outlives the erasure on an instance by that much at
// most. A full cache drops one pin to make room.
func TestPinsAreServedUntilMaxAge(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	p := New(nil, Options{MaxPins: 2, PinMaxAge: time.Hour, Now: c.now}).Pins
	p.Put("e", "u", "treatment")
	if got := p.Get("e", "u"); got != "treatment" {
		t.Fatalf("fresh pin %q", got)
	}
	if got := p.Get("e", "other"); got != "" {
		t.Fatalf("uncached pin %q", got)
	}
	c.t = c.t.Add(time.Hour - time.Second)
	if got := p.Get("e", "u"); got != "treatment" {
		t.Fatalf("pin before its max age %q", got)
	}
	c.t = c.t.Add(time.Second)
	if got := p.Get("e", "u"); got != "" {
		t.Fatalf("pin at its max age %q; want a miss", got)
	}
	p.Put("e", "u", "treatment") // read again: served anew
	if got := p.Get("e", "u"); got != "treatment" {
		t.Fatalf("re-read pin %q", got)
	}
	p.Put("e", "v", "control")
	p.Put("e", "w", "control")
	if n := len(p.pins); n != 2 {
		t.Fatalf("%d cached pins; want the max, 2", n)
	}
	if got := New(nil, Options{}).Pins.maxAge; got != DefaultPinMaxAge {
		t.Errorf("default max age %v; want %v", got, DefaultPinMaxAge)
	}
}
