package activities_test

import (
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
)

func TestPurgeExpiredDeletesInBatchesUpToTheCutoffOnly(t *testing.T) {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	other := testenv.NewOrg(t, db, testenv.Signer(t))
	asOf := time.Now().UTC()
	var events []ingest.EventRow
	for i := range 7 {
		for _, o := range []string{org.ID, other.ID} {
			ts := asOf.AddDate(0, 0, -31) // past a 30-day retention
			if i == 6 {
				ts = asOf.AddDate(0, 0, -29)
			}
			events = append(events, ingest.EventRow{OrgID: o, EventID: fmt.Sprint(i), Type: "exposure",
				ExperimentID: "00000000-0000-0000-0000-0000000000e1", UserID: "u", Variant: "a", Ts: ts, ReceivedAt: ts, Source: "api"})
		}
	}
	if err := db.Create(&events).Error; err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	acts := &activities.Activities{DB: db}
	env.RegisterActivity(acts)
	val, err := env.ExecuteActivity(acts.PurgeExpired, activities.PurgeOrgInput{OrgID: org.ID, RetentionDays: 30, AsOf: asOf, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	var out activities.PurgeOrgResult
	if err := val.Get(&out); err != nil {
		t.Fatal(err)
	}
	if out.EventsDeleted != 6 {
		t.Fatalf("deleted %d, want the 6 expired events, in batches of 2", out.EventsDeleted)
	}
	var mine, theirs int64
	db.Model(&ingest.EventRow{}).Where("org_id = ?", org.ID).Count(&mine)
	db.Model(&ingest.EventRow{}).Where("org_id = ?", other.ID).Count(&theirs)
	if mine != 1 || theirs != 7 {
		t.Fatalf("left %d of the org's events (want 1) and %d of another org's (want 7)", mine, theirs)
	}
}
