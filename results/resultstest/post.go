package resultstest

import (
	"net/http"
	"testing"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
)

// Post sends events through POST /v1/events with the API key, in batches,
// and fails the test unless every event is accepted.
func Post(t testing.TB, env *testenv.Env, apiKey string, events []ingest.EventRow) {
	t.Helper()
	const batch = 500
	for start := 0; start < len(events); start += batch {
		var wire []map[string]any
		for _, e := range events[start:min(start+batch, len(events))] {
			wire = append(wire, Wire(e))
		}
		resp := env.Do(t, http.MethodPost, "/v1/events", map[string]any{"events": wire}, testenv.APIKey(apiKey)...)
		var ack struct{ Accepted int }
		resp.JSON(t, &ack)
		if resp.Status != http.StatusAccepted || ack.Accepted != len(wire) {
			t.Fatalf("ingest: %d %s", resp.Status, resp.Body)
		}
	}
}
