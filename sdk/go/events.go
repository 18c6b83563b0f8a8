package expd

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// The server's bounds of model_call text fields, in UTF-8 bytes: a longer
// field gets the whole event rejected, so text is cut instead.
var modelCallTextBytes = map[string]int{"prompt": 64 << 10, "response": 64 << 10, "error": 4 << 10, "model": 256}

func boundText(fields map[string]any) {
	for name, max := range modelCallTextBytes {
		if s, ok := fields[name].(string); ok {
			fields[name] = cutUTF8(s, max)
		}
	}
}

// cutUTF8 is s cut to at most max bytes, never inside a character.
func cutUTF8(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

func uuid4() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	hex.Encode(out[9:13], b[4:6])
	hex.Encode(out[14:18], b[6:8])
	hex.Encode(out[19:23], b[8:10])
	hex.Encode(out[24:36], b[10:16])
	out[8], out[13], out[18], out[23] = '-', '-', '-', '-'
	return string(out[:])
}

// newEvent stamps fields with a type, a fresh event_id and a timestamp
// (an event_id or timestamp already set is kept: replays keep identity and time).
func newEvent(event string, fields map[string]any) map[string]any {
	if _, ok := fields["event_id"]; !ok {
		fields["event_id"] = uuid4()
	}
	if _, ok := fields["timestamp"]; !ok {
		fields["timestamp"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	}
	fields["type"] = event
	return fields
}

type exposureKey struct{ experiment, user string }

// exposureEntry is what the log knows of a user in an experiment: the
// decision computed on one parsed config (gen), and the UTC day of the last
// exposure queued for that variant.
type exposureEntry struct {
	gen   uint64
	dec   Decision
	ok    bool  // dec is valid (false: the user's bucket is in no range)
	day   int32 // noExposureDay until this variant's first exposure
	facts facts // what dec owes to hashing, for a targeted experiment's next decision
}

// exposureLog remembers, per (experiment, user), the variant computed on
// the current config and the UTC day of its last exposure: an exposure is
// due once per (experiment, user, variant, UTC day), and a warm Assign or a
// Track without a variant is one map lookup under a mutex, with no hashing,
// until the config changes. A user whose variant changes and changes back
// within a day gets one more exposure (the log keeps the latest variant
// only). Bounded: past max the oldest-inserted key is forgotten (it may be
// sent again: one extra event, never a wrong attribution).
type exposureLog struct {
	mu    sync.Mutex
	max   int
	m     map[exposureKey]exposureEntry
	order []exposureKey
	head  int
}

func newExposureLog(max int) *exposureLog {
	return &exposureLog{max: max, m: make(map[exposureKey]exposureEntry)}
}

// exposure says what a resolve owes the exposure stream.
type exposure uint8

const (
	exposeNone   exposure = iota // Track filling a variant: no exposure
	exposeDaily                  // Assign, GetPrompt, GetVariables: once per (experiment, user, variant, UTC day)
	exposeAlways                 // a model call: every call, and it counts as the day's
)

// noExposureDay marks an entry whose variant has had no exposure yet.
const noExposureDay int32 = -1

// resolve returns the user's decision in e with attributes attrs (ok
// false: in no range) and whether an exposure is due under mode on day. A
// user outside the experiment (not targeted) owes none. A targeted
// experiment's decision depends on the attributes, so it is computed
// again except for Track (exposeNone), which has none and takes the last;
// only the condition is evaluated again, the hashing's facts are kept.
func (l *exposureLog) resolve(e *experiment, user string, attrs map[string]any, day int32, mode exposure) (dec Decision, ok, send bool, f facts) {
	k := exposureKey{e.ID, user}
	l.mu.Lock()
	ent, seen := l.m[k]
	current := seen && ent.gen == e.gen
	if current && (e.targeting == nil || mode == exposeNone) {
		send = ent.ok && !ent.dec.outside() && (mode == exposeAlways || mode == exposeDaily && ent.day != day)
		if send && ent.day != day {
			ent.day = day
			l.m[k] = ent
		}
		l.mu.Unlock()
		return ent.dec, ent.ok, send, ent.facts
	}
	l.mu.Unlock()

	if current {
		f = ent.facts
	} else {
		f = e.facts(user) // hashing, outside the lock
	}
	dec, ok = e.decideFrom(f, attrs)
	if current && dec == ent.dec && ok == ent.ok {
		// A warm targeted call deciding as last time: the entry would be
		// written back unchanged unless the day's exposure is due, so it
		// is not locked again (a concurrent change is that call's to log).
		send = ok && !dec.outside() && (mode == exposeAlways || mode == exposeDaily && ent.day != day)
		if !send || ent.day == day {
			return dec, ok, send, f
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ent, seen = l.m[k]
	kept := seen && ent.ok && ok && ent.dec.Variant == dec.Variant // the day of the last exposure still counts
	send = ok && !dec.outside() && (mode == exposeAlways || mode == exposeDaily && !(kept && ent.day == day))
	next := exposureEntry{gen: e.gen, dec: dec, ok: ok, day: noExposureDay, facts: f}
	switch {
	case send:
		next.day = day
	case kept:
		next.day = ent.day
	}
	l.put(k, next, seen)
	return dec, ok, send, f
}

// put stores an entry; a new key may evict the oldest-inserted one.
// Called with l.mu held.
func (l *exposureLog) put(k exposureKey, ent exposureEntry, seen bool) {
	l.m[k] = ent
	if !seen {
		if len(l.order) < l.max {
			l.order = append(l.order, k)
		} else {
			delete(l.m, l.order[l.head])
			l.order[l.head] = k
			l.head = (l.head + 1) % l.max
		}
	}
}

// holdoutsDue returns the holdout exposures due for a decision in e whose
// facts are f (none unless it evaluated the holdout step): the user's
// membership in each holdout, once per (holdout, user, variant, UTC day)
// as an experiment's exposure, whichever experiment of the holdout's
// scope decided (docs/targeting.md, "Holdout exposures"). The log keys
// them by the holdout's id.
func (l *exposureLog) holdoutsDue(e *experiment, user string, f *facts, day int32) (due [][2]string) {
	if len(f.held) == 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range e.Holdouts {
		k, variant := exposureKey{e.Holdouts[i].ID, user}, f.holdoutVariant(i)
		ent, seen := l.m[k]
		if seen && ent.day == day && ent.dec.Variant == variant {
			continue
		}
		l.put(k, exposureEntry{dec: Decision{Variant: variant}, ok: true, day: day}, seen)
		due = append(due, [2]string{e.Holdouts[i].ID, variant})
	}
	return due
}

// utcDay is the day number of t (days since 1970-01-01 UTC).
func utcDay(t time.Time) int32 { return int32(t.Unix() / 86400) }

// dayClock is the current UTC day, read with one atomic load: a timer
// advances it at each UTC midnight and re-reads the wall clock at least
// every minute (clock steps, suspend). time.Now costs ~100 ns on some VMs,
// a third of an Assign.
type dayClock struct {
	day     atomic.Int32
	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

func startDayClock() *dayClock {
	c := &dayClock{}
	c.tick()
	return c
}

func (c *dayClock) tick() {
	now := time.Now()
	c.day.Store(utcDay(now))
	next := time.Duration(86400-now.Unix()%86400)*time.Second - time.Duration(now.Nanosecond())
	if next > time.Minute {
		next = time.Minute
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped {
		c.timer = time.AfterFunc(next+time.Millisecond, c.tick)
	}
}

func (c *dayClock) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	if c.timer != nil {
		c.timer.Stop()
	}
}
