package results

import (
	"fmt"
	"strings"
	"time"
)

// Kinds of run.
const (
	KindNightly = "nightly" // computed_for is a UTC day, YYYY-MM-DD
	KindManual  = "manual"  // computed_for is manual-<RFC 3339 instant>
)

const (
	dayLayout    = "2006-01-02"
	manualPrefix = "manual-"
)

// Key names one run of an experiment: what computed_for holds, and the end
// of the analysis window it implies.
type Key struct {
	ComputedFor string
	Kind        string
	WindowEnd   time.Time // exclusive
}

// NightlyKey is the run of the UTC day holding t; its window ends at the
// following midnight.
func NightlyKey(t time.Time) Key {
	day := t.UTC().Truncate(24 * time.Hour)
	return Key{ComputedFor: day.Format(dayLayout), Kind: KindNightly, WindowEnd: day.AddDate(0, 0, 1)}
}

// ManualKey is a manual run asked for at instant t: its window ends at
// the next whole second (t itself when it is one), so everything stamped
// up to t counts, and the run's workflow waits for that second before it
// reads (docs/results.md, "Runs"). Two requests within one second are the
// same run.
func ManualKey(t time.Time) Key {
	at := t.UTC().Truncate(time.Second)
	if at.Before(t) {
		at = at.Add(time.Second)
	}
	return Key{ComputedFor: manualPrefix + at.Format(time.RFC3339), Kind: KindManual, WindowEnd: at}
}

// ParseKey reads a computed_for value (the API's run_id and ?day=) and
// returns it in canonical form: a manual instant in another offset names
// the same run as its UTC form.
func ParseKey(s string) (Key, error) {
	if rest, ok := strings.CutPrefix(s, manualPrefix); ok {
		at, err := time.Parse(time.RFC3339, rest)
		if err != nil {
			return Key{}, fmt.Errorf("%q: want manual-<RFC 3339 instant>, e.g. manual-2025-01-31T12:00:00Z", s)
		}
		if at.Nanosecond() != 0 {
			return Key{}, fmt.Errorf("%q: manual run ids have whole seconds", s)
		}
		return ManualKey(at), nil
	}
	day, err := time.Parse(dayLayout, s)
	if err != nil {
		return Key{}, fmt.Errorf("%q: want a UTC day YYYY-MM-DD or manual-<RFC 3339 instant>", s)
	}
	return NightlyKey(day), nil
}
