package workflowclient_test

import (
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/worker"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/internal/temporaltest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/resultstest"
	expdworker "github.com/expd/expd/worker"
	"github.com/expd/expd/workflowclient"
	"github.com/expd/expd/workflows"
)

// Experiments written without their workflow (before it existed, or a
// route whose signal failed) get one when it has a step to take: a
// scheduled start_at or a running stop_at. Experiments without a pending
// step get none. Reconciling again keeps the same workflow runs.
func TestReconcileStartsMissingLifecycleWorkflows(t *testing.T) {
	tenv := temporaltest.Start(t)
	db := testenv.DB(t)
	tenv.NewWorker(func(r worker.Registry) { expdworker.Register(r, &activities.Activities{DB: db}) })
	org := testenv.NewOrg(t, db, testenv.Signer(t)).ID
	start, stop := time.Now().Add(time.Hour).UTC().Truncate(time.Second), time.Now().Add(2*time.Hour).UTC().Truncate(time.Second)
	create := func(name, status string, startAt, stopAt *time.Time) string {
		cfg := resultstest.Config(name)
		cfg.Status, cfg.StartAt, cfg.StopAt = status, startAt, stopAt
		exp, err := experiments.Store{DB: db}.Create(t.Context(), org, "user_1", cfg)
		if err != nil {
			t.Fatal(err)
		}
		return exp.ID
	}
	scheduled := create("scheduled", "", &start, nil)
	stopping := create("stopping", experiments.StatusRunning, nil, &stop)
	plain := create("plain", experiments.StatusRunning, nil, nil)
	stopped := create("stopped", experiments.StatusStopped, nil, &stop)

	s := workflowclient.Starter{Client: tenv.Client, TaskQueue: tenv.TaskQueue}
	runs := map[string]string{}
	for round := 1; round <= 2; round++ {
		res, err := s.ReconcileExperiments(t.Context(), db)
		if err != nil {
			t.Fatal(err)
		}
		if res.Checked != 3 || res.Signalled != 2 {
			t.Fatalf("round %d: %+v, want 3 checked and 2 signalled", round, res)
		}
		for id, next := range map[string]string{scheduled: "start", stopping: "stop"} {
			desc, err := tenv.Client.DescribeWorkflowExecution(t.Context(), workflows.ExperimentWorkflowID(id), "")
			if err != nil {
				t.Fatalf("round %d: workflow of %s: %v", round, id, err)
			}
			run := desc.WorkflowExecutionInfo.Execution.RunId
			if prev, ok := runs[id]; ok && prev != run {
				t.Fatalf("round %d: %s got a second workflow run", round, id)
			}
			runs[id] = run
			waitForState(t, s, id, func(st workflows.ExperimentState) bool { return st.Next == next })
		}
	}
	for _, id := range []string{plain, stopped} {
		_, err := tenv.Client.DescribeWorkflowExecution(t.Context(), workflows.ExperimentWorkflowID(id), "")
		if _, ok := err.(*serviceerror.NotFound); !ok {
			t.Fatalf("%s needs no workflow, describe: %v", id, err)
		}
	}
}

// waitForState queries the experiment's workflow until cond holds (a bound
// against a hung test, not a timing assertion).
func waitForState(t *testing.T, s workflowclient.Starter, id string, cond func(workflows.ExperimentState) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := s.ExperimentState(t.Context(), id)
		if err == nil && cond(st) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("state of %s: %+v %v", id, st, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
