package ingest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/expd/expd/internal/eventmix"
)

// benchEvents are n events of bench/ingest's mix (eventmix), decoded.
func benchEvents(b *testing.B, n int, now time.Time) []Event {
	out := make([]Event, n)
	for i := range out {
		raw, _ := json.Marshal(eventmix.Event("exp-1", i, now))
		var err error
		if out[i], err = Decode(raw); err != nil {
			b.Fatal(err)
		}
	}
	return out
}

// BenchmarkEventCheck is the validation of one event of the mix
// (docs/scale.md, the ingest profile: a regexp's match was a third of it).
func BenchmarkEventCheck(b *testing.B) {
	now := time.Now()
	evs := benchEvents(b, 100, now)
	w := Window{Now: now, MaxAge: LiveMaxAge}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := evs[i%len(evs)].Check(w); err != nil {
			b.Fatal(err)
		}
	}
}
