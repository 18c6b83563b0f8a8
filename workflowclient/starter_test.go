package workflowclient_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/expd/expd/webhooks"
	"github.com/expd/expd/workflowclient"
)

// Announce checks the event before it needs Temporal, and without a
// client every start fails with ErrNotConnected.
func TestAnnounceChecksTheEventThenNeedsTemporal(t *testing.T) {
	ev := webhooks.Event{ID: webhooks.EventID("experiment.stopped/exp-a/1"), OrgID: "org-1", Type: webhooks.EventExperimentStopped,
		ExperimentID: "exp-a", OccurredAt: time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC), Data: json.RawMessage(`{"experiment_id":"exp-a"}`)}
	var s workflowclient.Starter
	if err := s.Announce(t.Context(), ev); !errors.Is(err, workflowclient.ErrNotConnected) {
		t.Fatalf("Announce without Temporal: %v, want ErrNotConnected", err)
	}
	ev.Type = "experiment.exploded"
	if err := s.Announce(t.Context(), ev); err == nil || errors.Is(err, workflowclient.ErrNotConnected) {
		t.Fatalf("Announce of an unknown event type: %v, want it refused", err)
	}
}
