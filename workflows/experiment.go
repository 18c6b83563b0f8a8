package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/audit"
	"github.com/expd/expd/webhooks"
)

// Names of the experiment workflow's signal and query.
const (
	// LifecycleSignal carries a LifecycleChange: the experiment changed
	// and its schedule may have moved (re-read it).
	LifecycleSignal = "lifecycle"
	// StateQuery answers the workflow's ExperimentState.
	StateQuery = "state"
)

// Experiment workflow limits.
const (
	// experimentIterations bounds the loop of one run: each turn adds a
	// handful of events, so a workflow that lives for years continues as
	// new long before its history grows large.
	experimentIterations = 200
	// maxFiredKeys bounds the schedule steps remembered across
	// continue-as-new (a step fires once; start_at and stop_at rarely move).
	maxFiredKeys = 16
)

// lifecycleOptions retry a scheduled change until it is made: a stop_at
// must happen even if the database is away for a while.
var lifecycleOptions = workflow.ActivityOptions{
	StartToCloseTimeout: time.Minute,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
		MaximumInterval: 10 * time.Minute, NonRetryableErrorTypes: []string{"BadLifecycleChange"}},
}

// ExperimentInput names the experiment; Fired carries the schedule steps
// already taken across continue-as-new.
type ExperimentInput struct {
	OrgID        string
	ExperimentID string
	Fired        []string
}

// LifecycleChange is the payload of LifecycleSignal. The routes and the
// reconcile send it empty: the workflow re-reads the schedule (the
// change's announcement went through the outbox). Status, set by API
// instances from before the outbox, is the status a route's change led
// to at Version, and is announced under the same event id.
type LifecycleChange struct {
	Status         string
	Version        int
	Reason         string
	ShippedVariant string
	Actor          string
}

// ExperimentState is what StateQuery answers and the workflow returns.
type ExperimentState struct {
	Status  string
	Version int
	StartAt *time.Time
	StopAt  *time.Time
	// Next is the scheduled step the workflow waits for (start | stop),
	// at NextAt; empty when nothing is scheduled.
	Next   string
	NextAt *time.Time
	// Done: the experiment is shipped (final) or gone; the workflow ended.
	Done  bool
	Fired []string
}

// Experiment is the one lifecycle workflow of an experiment
// (ExperimentWorkflowID). It reads the experiment's status and schedule,
// sleeps on a durable timer until start_at or stop_at (no polling: the
// timer lives in Temporal and survives worker restarts and deploys), and
// applies the step through the lifecycle's one transition path
// (activities.ApplyLifecycle). Signals (routes, the reconcile) wake it to
// re-read the schedule. It ends once the experiment is shipped or deleted
// and continues as new before its history grows.
func Experiment(ctx workflow.Context, in ExperimentInput) (ExperimentState, error) {
	st := ExperimentState{Fired: in.Fired}
	if err := workflow.SetQueryHandler(ctx, StateQuery, func() (ExperimentState, error) { return st, nil }); err != nil {
		return st, err
	}
	signals := workflow.GetSignalChannel(ctx, LifecycleSignal)
	actx := workflow.WithActivityOptions(ctx, lifecycleOptions)
	for turn := 0; ; turn++ {
		if err := loadLifecycle(actx, in, &st); err != nil {
			return st, err
		}
		if st.Done {
			drainSignals(ctx, in, signals)
			return st, nil
		}
		if turn >= experimentIterations || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			drainSignals(ctx, in, signals)
			return st, workflow.NewContinueAsNewError(ctx, Experiment, ExperimentInput{OrgID: in.OrgID, ExperimentID: in.ExperimentID, Fired: st.Fired})
		}
		now := workflow.Now(ctx)
		if st.Next != "" && !st.NextAt.After(now) {
			if err := takeStep(actx, in, &st); err != nil {
				return st, err
			}
			continue
		}
		// Wait for the step's instant or a signal; either way the next turn
		// re-reads the experiment, so a moved or removed start_at/stop_at
		// is honoured and a due step is taken there.
		tctx, cancel := workflow.WithCancel(ctx)
		sel := workflow.NewSelector(ctx)
		if st.Next != "" {
			sel.AddFuture(workflow.NewTimer(tctx, st.NextAt.Sub(now)), func(workflow.Future) {})
		}
		sel.AddReceive(signals, func(c workflow.ReceiveChannel, _ bool) {
			var ch LifecycleChange
			c.Receive(ctx, &ch)
			announceChange(ctx, in, ch)
		})
		sel.Select(ctx)
		cancel()
	}
}

// loadLifecycle reads the experiment and plans the next scheduled step.
func loadLifecycle(ctx workflow.Context, in ExperimentInput, st *ExperimentState) error {
	var cur activities.LifecycleState
	if err := workflow.ExecuteActivity(ctx, a.LoadLifecycle, activities.LifecycleInput{OrgID: in.OrgID, ExperimentID: in.ExperimentID}).Get(ctx, &cur); err != nil {
		return err
	}
	st.Status, st.Version, st.StartAt, st.StopAt = cur.Status, cur.Version, cur.StartAt, cur.StopAt
	st.Done = !cur.Found || cur.Status == "shipped"
	st.Next, st.NextAt = "", nil
	switch {
	case st.Done:
	case cur.Status == "scheduled" && cur.StartAt != nil && !st.fired(stepKey(in.ExperimentID, "start", *cur.StartAt)):
		st.Next, st.NextAt = "start", cur.StartAt
	case cur.Status == "running" && cur.StopAt != nil && !st.fired(stepKey(in.ExperimentID, "stop", *cur.StopAt)):
		st.Next, st.NextAt = "stop", cur.StopAt
	}
	return nil
}

// stepKey names one scheduled step: the audit dedup key of its change.
func stepKey(experimentID, action string, at time.Time) string {
	return "schedule/" + action + "/" + experimentID + "/" + at.UTC().Format(time.RFC3339Nano)
}

func (st *ExperimentState) fired(key string) bool {
	for _, k := range st.Fired {
		if k == key {
			return true
		}
	}
	return false
}

// takeStep applies the planned step once and announces it when this
// workflow made it.
func takeStep(ctx workflow.Context, in ExperimentInput, st *ExperimentState) error {
	key := stepKey(in.ExperimentID, st.Next, *st.NextAt)
	from, reason := []string{"scheduled"}, "start_at "+st.NextAt.UTC().Format(time.RFC3339)+" reached"
	if st.Next == "stop" {
		from, reason = []string{"running"}, "stop_at "+st.NextAt.UTC().Format(time.RFC3339)+" reached"
	}
	wid := workflow.GetInfo(ctx).WorkflowExecution.ID
	var res activities.ApplyLifecycleResult
	err := workflow.ExecuteActivity(ctx, a.ApplyLifecycle, activities.ApplyLifecycleInput{OrgID: in.OrgID, ExperimentID: in.ExperimentID,
		Action: st.Next, Reason: reason, OnlyFrom: from, WorkflowID: wid, DedupKey: key}).Get(ctx, &res)
	if err != nil {
		return err
	}
	st.Fired = append(st.Fired, key)
	if len(st.Fired) > maxFiredKeys {
		st.Fired = st.Fired[len(st.Fired)-maxFiredKeys:]
	}
	if res.Applied {
		announceLifecycle(ctx, in.OrgID, in.ExperimentID, LifecycleEventData{Status: res.Status, Version: res.Version, Reason: reason,
			Actor: audit.SystemActor, WorkflowID: wid})
	}
	return nil
}

// announceChange announces a route's change carried by a signal.
func announceChange(ctx workflow.Context, in ExperimentInput, ch LifecycleChange) {
	if ch.Status == "" {
		return
	}
	announceLifecycle(ctx, in.OrgID, in.ExperimentID, LifecycleEventData{Status: ch.Status, Version: ch.Version, Reason: ch.Reason,
		ShippedVariant: ch.ShippedVariant, Actor: ch.Actor})
}

// announceLifecycle announces that the experiment entered a status at a
// version, under webhooks.LifecycleEvent's id (type, experiment, version):
// the change's transaction queued the same event in the outbox, and
// whichever of the two starts its delivery first delivers it.
func announceLifecycle(ctx workflow.Context, orgID, experimentID string, d LifecycleEventData) {
	if ev, ok, err := webhooks.LifecycleEvent(orgID, experimentID, workflow.Now(ctx), d); ok || err != nil {
		announceEvent(ctx, ev, err)
	}
}

// drainSignals handles the signals already delivered, so none is lost
// when the run ends or continues as new.
func drainSignals(ctx workflow.Context, in ExperimentInput, signals workflow.ReceiveChannel) {
	for {
		var ch LifecycleChange
		if !signals.ReceiveAsync(&ch) {
			return
		}
		announceChange(ctx, in, ch)
	}
}
