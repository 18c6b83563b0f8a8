package audit_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/expd/expd/audit"
	"github.com/expd/expd/internal/testenv"
)

// Starts recorded as experiment.running by older code are shown and found
// as experiment.started, next to rows recorded under today's name; the
// old rows themselves are not rewritten.
func TestLegacyStartActionReadsAsStarted(t *testing.T) {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	legacy := map[string]any{"id": uuid.NewString(), "org_id": org.ID, "experiment_id": "exp-1", "action": "experiment.running",
		"actor": "user_1", "created_at": at}
	if err := db.Table("audit_log").Create(legacy).Error; err != nil {
		t.Fatal(err)
	}
	for i, action := range []string{audit.ExperimentStarted, audit.ExperimentStopped} {
		err := audit.Record(t.Context(), db, audit.Entry{OrgID: org.ID, ExperimentID: "exp-1", Action: action, Actor: "user_1", At: at.Add(time.Duration(i+1) * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, filter := range []string{audit.ExperimentStarted, "experiment.running"} {
		page, err := audit.List(t.Context(), db, org.ID, audit.Query{Action: filter, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entries) != 2 || page.Entries[0].Action != audit.ExperimentStarted || page.Entries[1].Action != audit.ExperimentStarted ||
			!page.Entries[1].At.Equal(at) {
			t.Fatalf("filter %s: %+v", filter, page.Entries)
		}
	}
	var stored []string
	if err := db.Table("audit_log").Where("org_id = ? AND experiment_id = ?", org.ID, "exp-1").Order("created_at").Pluck("action", &stored).Error; err != nil {
		t.Fatal(err)
	}
	if len(stored) != 3 || stored[0] != "experiment.running" {
		t.Fatalf("stored actions %v: the legacy row was rewritten", stored)
	}
}
