package expd

import (
	"crypto/rand"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"
)

// The server's bounds of model_call text fields, in UTF-8 bytes: a longer
// field gets the whole event rejected, so text is cut instead.
var modelCallTextBytes = map[string]int{"prompt": 64 << 10, "response": 64 << 10, "error": 4 << 10, "model": 256}

func boundText(fields map[string]any) {
	for name, max := range modelCallTextBytes {
		if s, ok := fields[name].(string); ok && len(s) > max {
			cut := max
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			fields[name] = s[:cut]
		}
	}
}

func uuid4() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
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

type exposureKey struct{ experiment, variant, user string }

// exposureLog remembers one exposure per (experiment, user, variant, UTC
// day). Bounded: past max the oldest-inserted key is forgotten (it may be
// sent again: one extra event, never a wrong attribution).
type exposureLog struct {
	mu    sync.Mutex
	max   int
	days  map[exposureKey]int64
	order []exposureKey
	head  int
}

func newExposureLog(max int) *exposureLog {
	return &exposureLog{max: max, days: make(map[exposureKey]int64)}
}

func (l *exposureLog) firstToday(experiment, variant, user string, now time.Time) bool {
	day := now.Unix() / 86400
	k := exposureKey{experiment, variant, user}
	l.mu.Lock()
	defer l.mu.Unlock()
	last, seen := l.days[k]
	if seen && last == day {
		return false
	}
	l.days[k] = day
	if !seen {
		if len(l.order) < l.max {
			l.order = append(l.order, k)
		} else {
			delete(l.days, l.order[l.head])
			l.order[l.head] = k
			l.head = (l.head + 1) % l.max
		}
	}
	return true
}
