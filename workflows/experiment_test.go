package workflows_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/webhooks"
	"github.com/expd/expd/workflows"
)

// fakeLifecycle is the experiment as the lifecycle activities see it; the
// mocks read and change it, and record when each change was applied (in
// the test environment's skipped time).
type fakeLifecycle struct {
	state   activities.LifecycleState
	events  *[]webhooks.Event // announced
	applied []string          // action@offset from t0
	t0      time.Time
	now     func() time.Time
}

func (f *fakeLifecycle) load(context.Context, activities.LifecycleInput) (activities.LifecycleState, error) {
	return f.state, nil
}

func (f *fakeLifecycle) apply(_ context.Context, in activities.ApplyLifecycleInput) (activities.ApplyLifecycleResult, error) {
	if !slices.Contains(in.OnlyFrom, f.state.Status) {
		return activities.ApplyLifecycleResult{Status: f.state.Status, Version: f.state.Version}, nil
	}
	f.state.Status = map[string]string{"start": "running", "stop": "stopped"}[in.Action]
	f.state.Version++
	f.applied = append(f.applied, in.Action+"@"+f.now().Sub(f.t0).String())
	return activities.ApplyLifecycleResult{Applied: true, Status: f.state.Status, Version: f.state.Version}, nil
}

func newLifecycleEnv(t *testing.T, state activities.LifecycleState) (*fakeLifecycle, func(time.Duration, func()), func() error, func(workflows.LifecycleChange), func() workflows.ExperimentState) {
	t.Helper()
	env, acts := newSuiteEnv()
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	env.SetStartTime(t0)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: workflows.ExperimentWorkflowID("exp")})
	f := &fakeLifecycle{state: state, t0: t0, now: env.Now, events: mockDeliveries(env)}
	env.OnActivity(acts.LoadLifecycle, mock.Anything, mock.Anything).Return(f.load)
	env.OnActivity(acts.ApplyLifecycle, mock.Anything, mock.Anything).Return(f.apply)
	at := func(d time.Duration, fn func()) { env.RegisterDelayedCallback(fn, d) }
	run := func() error {
		env.ExecuteWorkflow(workflows.Experiment, workflows.ExperimentInput{OrgID: "org", ExperimentID: "exp"})
		if !env.IsWorkflowCompleted() {
			t.Fatal("workflow did not complete")
		}
		return env.GetWorkflowError()
	}
	signal := func(ch workflows.LifecycleChange) { env.SignalWorkflow(workflows.LifecycleSignal, ch) }
	query := func() workflows.ExperimentState {
		v, err := env.QueryWorkflow(workflows.StateQuery)
		if err != nil {
			t.Fatal(err)
		}
		var st workflows.ExperimentState
		if err := v.Get(&st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	return f, at, run, signal, query
}

// mockDeliveries stands in for the DeliverEvent child that Announce
// starts and collects the events announced, once per event id.
func mockDeliveries(env *testsuite.TestWorkflowEnvironment) *[]webhooks.Event {
	var events []webhooks.Event
	env.RegisterWorkflow(workflows.DeliverEvent)
	env.OnWorkflow(workflows.DeliverEvent, mock.Anything, mock.Anything).Return(
		func(_ workflow.Context, in workflows.DeliverEventInput) (workflows.DeliverEventResult, error) {
			events = append(events, in.Event)
			return workflows.DeliverEventResult{}, nil
		})
	return &events
}

// eventTypes lists the types of events, in order.
func eventTypes(events []webhooks.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Type)
	}
	return out
}

func ptr(t time.Time) *time.Time { return &t }

// start_at and stop_at fire at their instants (durable timers, skipped
// time), the query reports the step waited for, and shipping ends it.
func TestExperimentStartsAndStopsOnSchedule(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	startAt, stopAt := t0.Add(2*time.Hour+30*time.Minute), t0.Add(26*time.Hour)
	f, at, run, signal, query := newLifecycleEnv(t, activities.LifecycleState{Found: true, Status: "scheduled", Version: 1, StartAt: ptr(startAt), StopAt: ptr(stopAt)})
	var before, between workflows.ExperimentState
	at(time.Hour, func() { before = query() })
	at(3*time.Hour, func() { between = query() })
	at(30*time.Hour, func() {
		f.state.Status, f.state.Version = "shipped", f.state.Version+1
		signal(workflows.LifecycleChange{Status: "shipped", Version: f.state.Version, Actor: "user_1"})
	})
	if err := run(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"start@2h30m0s", "stop@26h0m0s"}; !slices.Equal(f.applied, want) {
		t.Fatalf("applied %v, want %v", f.applied, want)
	}
	if got, want := eventTypes(*f.events), []string{"experiment.started", "experiment.stopped", "experiment.shipped"}; !slices.Equal(got, want) {
		t.Fatalf("announced %v, want %v", got, want)
	}
	if before.Status != "scheduled" || before.Next != "start" || !before.NextAt.Equal(startAt) {
		t.Fatalf("state before the start %+v", before)
	}
	if between.Status != "running" || between.Next != "stop" || !between.NextAt.Equal(stopAt) {
		t.Fatalf("state while running %+v", between)
	}
}

// A stop signalled during the wait for start_at cancels the start: the
// workflow re-reads the experiment and has nothing left to schedule.
func TestExperimentStopSignalDuringScheduledWait(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	f, at, run, signal, query := newLifecycleEnv(t, activities.LifecycleState{Found: true, Status: "scheduled", Version: 1, StartAt: ptr(t0.Add(24 * time.Hour))})
	var after workflows.ExperimentState
	at(time.Hour, func() {
		f.state.Status, f.state.Version = "stopped", 2 // the stop route's transition
		signal(workflows.LifecycleChange{Status: "stopped", Version: 2, Actor: "user_1"})
	})
	at(2*time.Hour, func() { after = query() })
	at(48*time.Hour, func() {
		f.state.Status = "shipped"
		signal(workflows.LifecycleChange{})
	})
	if err := run(); err != nil {
		t.Fatal(err)
	}
	if len(f.applied) != 0 {
		t.Fatalf("applied %v after a stop", f.applied)
	}
	if got := eventTypes(*f.events); !slices.Equal(got, []string{"experiment.stopped"}) || (*f.events)[0].OrgID != "org" {
		t.Fatalf("announced %v", got)
	}
	if after.Status != "stopped" || after.Next != "" {
		t.Fatalf("state after the stop %+v", after)
	}
}

// A stop_at that fired is not taken again after a manual restart, and a
// start_at in the past starts at once.
func TestExperimentScheduledStepFiresOnce(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	f, at, run, signal, _ := newLifecycleEnv(t, activities.LifecycleState{Found: true, Status: "scheduled", Version: 1,
		StartAt: ptr(t0.Add(-time.Minute)), StopAt: ptr(t0.Add(time.Hour))})
	at(2*time.Hour, func() {
		f.state.Status, f.state.Version = "running", f.state.Version+1 // a manual start after stop_at
		signal(workflows.LifecycleChange{Status: "running", Version: f.state.Version, Actor: "user_1"})
	})
	at(5*time.Hour, func() {
		f.state.Status = "shipped"
		signal(workflows.LifecycleChange{})
	})
	if err := run(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"start@0s", "stop@1h0m0s"}; !slices.Equal(f.applied, want) {
		t.Fatalf("applied %v, want %v", f.applied, want)
	}
}

// A long-lived workflow continues as new with its fired steps before its
// history grows.
func TestExperimentContinuesAsNew(t *testing.T) {
	env, acts := newSuiteEnv()
	state := activities.LifecycleState{Found: true, Status: "running", Version: 3}
	env.OnActivity(acts.LoadLifecycle, mock.Anything, mock.Anything).Return(state, nil)
	for i := 1; i <= 250; i++ {
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.LifecycleSignal, workflows.LifecycleChange{}) }, time.Duration(i)*time.Minute)
	}
	env.ExecuteWorkflow(workflows.Experiment, workflows.ExperimentInput{OrgID: "org", ExperimentID: "exp", Fired: []string{"schedule/start/exp/x"}})
	var next workflows.ExperimentInput
	continuedWith(t, env.GetWorkflowError(), &next)
	if next.ExperimentID != "exp" || !slices.Equal(next.Fired, []string{"schedule/start/exp/x"}) {
		t.Fatalf("continued with %+v", next)
	}
}
