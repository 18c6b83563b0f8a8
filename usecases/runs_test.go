package usecases_test

import (
	"errors"
	"testing"
	"time"

	"github.com/expd/expd/internal/temporaltest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results"
	"github.com/expd/expd/workflowclient"
	"github.com/expd/expd/workflows"
)

func TestManualRunIsFollowedThroughTemporal(t *testing.T) {
	tenv := temporaltest.Start(t) // no worker: the run stays running
	svc, org := newService(t, tenv)
	exp, err := svc.CreateExperiment(ctx, org, actor, testenv.ExperimentConfig("manual"))
	if err != nil {
		t.Fatal(err)
	}
	run, err := svc.StartManualRun(ctx, org, exp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != results.StatusRunning || run.Kind != results.KindManual || run.WorkflowID != workflows.ResultsWorkflowID(exp.ID, run.RunID) {
		t.Fatalf("started %+v", run)
	}
	key, err := results.ParseKey(run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	state, err := svc.RunState(ctx, org, exp.ID, key)
	if err != nil || state.Status != results.StatusRunning || state.Rows != nil {
		t.Fatalf("state of a running run: %+v, %v", state, err)
	}
	// A run Temporal ended without a stored record is failed.
	if err := tenv.Client.TerminateWorkflow(ctx, run.WorkflowID, "", "test"); err != nil {
		t.Fatal(err)
	}
	if state, err := svc.RunState(ctx, org, exp.ID, key); err != nil || state.Status != results.StatusFailed {
		t.Fatalf("state of a terminated run: %+v, %v", state, err)
	}
}

func TestRunStateWithoutTemporalReadsTheStoredRun(t *testing.T) {
	svc, org := newService(t, nil)
	exp, err := svc.CreateExperiment(ctx, org, actor, testenv.ExperimentConfig("stored"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.StartManualRun(ctx, org, exp.ID); !errors.Is(err, workflowclient.ErrNotConnected) {
		t.Fatalf("start without Temporal: %v", err)
	}
	key := results.ManualKey(time.Now())
	if _, err := svc.RunState(ctx, org, exp.ID, key); !errors.Is(err, results.ErrRunNotFound) {
		t.Fatalf("state of an unknown run: %v", err)
	}
	end := key.WindowEnd
	run := results.Run{ExperimentID: exp.ID, ComputedFor: key.ComputedFor, OrgID: org, Kind: key.Kind,
		WorkflowID: workflows.ResultsWorkflowID(exp.ID, key.ComputedFor), Status: results.StatusRunning, ExperimentVersion: 1,
		WindowStart: end.Add(-24 * time.Hour), WindowEnd: end, WindowDays: 1, StartedAt: end}
	if err := results.StartRun(ctx, svc.DB, run); err != nil {
		t.Fatal(err)
	}
	state, err := svc.RunState(ctx, org, exp.ID, key)
	if err != nil {
		t.Fatal(err)
	}
	if state.Status != results.StatusRunning || state.Window == nil || !state.Window.End.Equal(end) || state.Rows == nil || *state.Rows != 0 {
		t.Fatalf("state from the stored run: %+v", state)
	}
	// Another org's run is not this org's.
	other := testenv.NewOrg(t, svc.DB, testenv.Signer(t))
	if _, err := svc.RunState(ctx, other.ID, exp.ID, key); !errors.Is(err, results.ErrRunNotFound) {
		t.Fatalf("another org's run: %v", err)
	}
}
