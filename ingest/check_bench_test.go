package ingest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
)

// benchEvents are n events of bench/ingest's mix: half exposures, 40%
// model calls with a short prompt and response, 10% business events.
func benchEvents(b *testing.B, n int, now time.Time) []Event {
	out := make([]Event, n)
	for i := range out {
		e := map[string]any{"event_id": uuid.NewString(), "experiment_id": "exp-1", "user_id": fmt.Sprintf("user-%d", i/3),
			"variant": []string{"control", "treatment"}[i%2], "timestamp": now.Add(-time.Duration(i%3600) * time.Second).Format(time.RFC3339Nano)}
		switch i % 10 {
		case 0, 1, 2, 3, 4:
			e["type"], e["config_version"] = "exposure", 1
		case 5, 6, 7, 8:
			e["type"], e["model"], e["latency_ms"], e["input_tokens"], e["output_tokens"], e["cost_usd"] =
				"model_call", "gpt-4o-mini", float64(200+i%900), 120+i%50, 40+i%30, 0.00042
			e["prompt"], e["response"] = "You are a helpful support agent.", "Thanks for reaching out!"
		default:
			e["type"], e["business_metric"], e["value"] = "business_event", "conversion", 1.0
		}
		raw, _ := json.Marshal(e)
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
