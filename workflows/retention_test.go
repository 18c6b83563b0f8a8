package workflows_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/internal/temporaltest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/models"
	"github.com/expd/expd/results"
	expdworker "github.com/expd/expd/worker"
	"github.com/expd/expd/workflows"
)

func TestRetentionPurgesExpiredEventsAndNightlyRunsButKeepsManualRuns(t *testing.T) {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t)) // free plan: 30 days
	now := time.Now().UTC()
	old, recent := now.AddDate(0, 0, -40), now.AddDate(0, 0, -2)
	var events []models.Event
	for i, ts := range []time.Time{old, old, recent} {
		events = append(events, models.Event{OrgID: org.ID, EventID: string(rune('a' + i)), Type: "exposure",
			ExperimentID: "00000000-0000-0000-0000-0000000000e1", UserID: "u", Variant: "a", Ts: ts, ReceivedAt: ts, Source: "api"})
	}
	if err := db.Create(&events).Error; err != nil {
		t.Fatal(err)
	}
	runs := []results.Key{results.NightlyKey(old), results.NightlyKey(recent), results.ManualKey(old)}
	for _, k := range runs {
		r := results.Run{ExperimentID: events[0].ExperimentID, ComputedFor: k.ComputedFor, OrgID: org.ID, Kind: k.Kind, WorkflowID: "wf",
			ExperimentVersion: 1, WindowStart: old, WindowEnd: k.WindowEnd, StartedAt: k.WindowEnd}
		if err := results.StartRun(context.Background(), db, r); err != nil {
			t.Fatal(err)
		}
	}

	tenv := temporaltest.Start(t)
	tenv.NewWorker(func(r worker.Registry) { expdworker.Register(r, &activities.Activities{DB: db}) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run, err := tenv.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: tenv.TaskQueue}, workflows.Retention, workflows.RetentionInput{AsOf: now})
	if err != nil {
		t.Fatal(err)
	}
	var out workflows.RetentionResult
	if err := run.Get(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if out.EventsDeleted != 2 || out.RunsDeleted != 1 {
		t.Fatalf("retention result %+v, want 2 events and 1 nightly run deleted", out)
	}
	var left []models.Event
	db.Where("org_id = ?", org.ID).Find(&left)
	if len(left) != 1 || left[0].EventID != "c" {
		t.Fatalf("events left: %+v, want only the recent one", left)
	}
	for i, k := range runs {
		_, err := results.LoadRun(context.Background(), db, org.ID, events[0].ExperimentID, k.ComputedFor)
		if kept := err == nil; kept != (i > 0) {
			t.Errorf("run %s kept=%v (err %v)", k.ComputedFor, kept, err)
		}
	}
}
