package api_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/api"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/webhooks"
	"github.com/expd/expd/workflowclient"
	"github.com/expd/expd/workflows"
)

// flakyTemporal is the API's Temporal client with an off switch: while
// down, every start and signal fails as if the frontend were unreachable.
type flakyTemporal struct {
	client.Client
	down atomic.Bool
}

var errTemporalAway = errors.New("temporal frontend unreachable (test)")

func (f *flakyTemporal) ExecuteWorkflow(ctx context.Context, opts client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	if f.down.Load() {
		return nil, errTemporalAway
	}
	return f.Client.ExecuteWorkflow(ctx, opts, wf, args...)
}

func (f *flakyTemporal) SignalWithStartWorkflow(ctx context.Context, id, signal string, arg any, opts client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	if f.down.Load() {
		return nil, errTemporalAway
	}
	return f.Client.SignalWithStartWorkflow(ctx, id, signal, arg, opts, wf, args...)
}

// Lifecycle changes made while the API cannot reach Temporal are neither
// announced nor signalled at once, but both are owed in the database
// (outbox rows, signal_pending_since). The reconcile (Redrive) delivers
// each announcement once, signed, and starts or signals each experiment's
// workflow; running it again delivers nothing twice, even when a row
// looks pending again (a crash between the start and the mark). Once
// Temporal answers, a route delivers its announcement at once.
func TestAnnouncementsAndSignalsSurviveTemporalBeingAway(t *testing.T) {
	var flaky *flakyTemporal
	env, tenv := testenv.NewWithWorker(t, func(a *activities.Activities) { a.Webhooks = &webhooks.Sender{AllowPrivate: true} },
		func(d *api.Deps) {
			flaky = &flakyTemporal{Client: d.Temporal}
			d.Temporal = flaky
		})
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	listener, stopListener := listenForWebhooks(t, env, org.ID)
	defer stopListener()
	s := workflowclient.Starter{Client: tenv.Client, TaskQueue: tenv.TaskQueue}

	stopAt := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	create := func(name, status string) string {
		cfg := resultstest.Config(name)
		cfg.Status, cfg.StopAt = status, &stopAt
		var exp experimentBody
		env.Do(t, http.MethodPost, "/v1/experiments", cfg, admin...).ExpectJSON(t, http.StatusCreated, &exp)
		return exp.ID
	}
	// a: running with a stop_at, its workflow armed while Temporal answered.
	a := create("armed", "running")
	waitForExperimentState(t, s, a, func(st workflows.ExperimentState) bool { return st.Next == "stop" && st.Version == 1 })
	// b: stopped, nothing to arm, no workflow.
	b := create("idle", "stopped")

	flaky.down.Store(true)
	lifecycle := func(id, action string) {
		if resp := env.Do(t, http.MethodPost, "/v1/experiments/"+id+"/"+action, nil, admin...); resp.Status != http.StatusOK {
			t.Fatalf("%s %s: %d %s", action, id, resp.Status, resp.Body)
		}
	}
	lifecycle(a, "stop")
	lifecycle(a, "start") // owes a's workflow a signal: its stop_at is ahead again
	lifecycle(b, "start") // owes b a workflow

	pending := func() (events, signals int) {
		t.Helper()
		queued, err := webhooks.Queued(t.Context(), env.DB, org.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range queued {
			if q.SentAt == nil {
				events++
			}
		}
		var n int64
		if err := env.DB.Raw("SELECT COUNT(*) FROM experiments WHERE org_id = ? AND signal_pending_since IS NOT NULL", org.ID).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		return events, int(n)
	}
	if e, sg := pending(); e != 3 || sg != 2 {
		t.Fatalf("while Temporal was away: %d pending announcements, %d owed signals; want 3 and 2", e, sg)
	}
	if _, err := tenv.Client.DescribeWorkflowExecution(t.Context(), workflows.ExperimentWorkflowID(b), ""); err == nil {
		t.Fatal("b has a workflow although its signal failed")
	}

	redrive := func(round int) workflows.RedriveResult {
		t.Helper()
		run, err := tenv.Client.ExecuteWorkflow(t.Context(), client.StartWorkflowOptions{
			ID: "redrive-" + tenv.TaskQueue + "-" + string(rune('0'+round)), TaskQueue: tenv.TaskQueue}, workflows.Redrive, workflows.RedriveInput{})
		if err != nil {
			t.Fatal(err)
		}
		var res workflows.RedriveResult
		if err := run.Get(t.Context(), &res); err != nil {
			t.Fatalf("reconcile %d: %v", round, err)
		}
		return res
	}
	if res := redrive(1); res.Announced != 3 || res.Signalled != 2 || res.AnnounceFailed != 0 || res.SignalFailed != 0 {
		t.Fatalf("first reconcile %+v", res)
	}
	waitUntil(t, "the three announcements", func() bool {
		return len(listener.ofType(webhooks.EventExperimentStopped)) == 1 && len(listener.ofType(webhooks.EventExperimentStarted)) == 2
	})
	// a's workflow re-read the experiment (version 3), b's was started.
	waitForExperimentState(t, s, a, func(st workflows.ExperimentState) bool { return st.Next == "stop" && st.Version == 3 })
	waitForExperimentState(t, s, b, func(st workflows.ExperimentState) bool { return st.Next == "stop" && st.Version == 2 })
	if e, sg := pending(); e != 0 || sg != 0 {
		t.Fatalf("after the reconcile: %d pending announcements, %d owed signals", e, sg)
	}

	if res := redrive(2); res != (workflows.RedriveResult{}) {
		t.Fatalf("a second reconcile did %+v", res)
	}
	// A crash between starting a delivery and marking it sent leaves the
	// row pending: the next reconcile finds the delivery started.
	if err := env.DB.Exec("UPDATE outbound_events SET sent_at = NULL WHERE org_id = ?", org.ID).Error; err != nil {
		t.Fatal(err)
	}
	if res := redrive(3); res.Announced != 3 || res.AnnounceFailed != 0 {
		t.Fatalf("reconcile of rows already delivered: %+v", res)
	}

	// Temporal answers again: the route announces at once.
	flaky.down.Store(false)
	lifecycle(b, "stop")
	if e, sg := pending(); e != 0 || sg != 0 {
		t.Fatalf("after a stop with Temporal up: %d pending announcements, %d owed signals", e, sg)
	}
	waitUntil(t, "b's stop announced", func() bool { return len(listener.ofType(webhooks.EventExperimentStopped)) == 2 })

	time.Sleep(time.Second) // a duplicate delivery, had one started, would have arrived by now
	listener.mu.Lock()
	received, rejected := len(listener.events), listener.rejected
	listener.mu.Unlock()
	if received != 4 || rejected != 0 {
		t.Fatalf("%d deliveries received (%d rejected), want 4 each once", received, rejected)
	}
}

// waitForExperimentState queries the experiment's workflow until cond
// holds (a bound against a hung test, not a timing assertion).
func waitForExperimentState(t *testing.T, s workflowclient.Starter, id string, cond func(workflows.ExperimentState) bool) {
	t.Helper()
	var st workflows.ExperimentState
	var err error
	waitUntil(t, "workflow state of "+id, func() bool {
		st, err = s.ExperimentState(t.Context(), id)
		return err == nil && cond(st)
	})
}
