package workflows_test

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/nexus-rpc/sdk-go/nexus"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/billing"
	"github.com/expd/expd/guardrails"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/verdict"
	"github.com/expd/expd/webhooks"
)

// workflowsOnly registers the workflows that expd's worker registration
// names and drops its activities, so the same list serves a replayer (which
// takes no activities) and a worker running fakeActivities.
type workflowsOnly struct{ worker.WorkflowRegistry }

func (workflowsOnly) RegisterActivity(any)                                         {}
func (workflowsOnly) RegisterActivityWithOptions(any, activity.RegisterOptions)    {}
func (workflowsOnly) RegisterDynamicActivity(any, activity.DynamicRegisterOptions) {}
func (workflowsOnly) RegisterNexusService(*nexus.Service)                          {}

// newSuiteEnv is a testsuite environment with the real activities
// registered, for tests to mock. The deadlock detector gets a minute: a
// loaded CI machine can starve the workflow goroutine past its default 1 s.
func newSuiteEnv() (*testsuite.TestWorkflowEnvironment, *activities.Activities) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	acts := &activities.Activities{}
	env.RegisterActivity(acts)
	return env, acts
}

// failingExperiment makes fakeActivities.AnalyzeExperiment fail for good.
const failingExperiment = "exp-failing"

// fakeActivities stands in for activities.Activities with canned answers
// (same method names, so the same activity types): workflow histories
// recorded with it exercise every branch without a database.
type fakeActivities struct{}

func (fakeActivities) LoadRunPlan(_ context.Context, in activities.RunInput) (activities.RunPlan, error) {
	if in.ExperimentID == "exp-skipped" {
		return activities.RunPlan{Skip: "no exposures in the window"}, nil
	}
	return activities.RunPlan{Kind: "manual", ExperimentVersion: 1, Plan: "free", Metrics: 2}, nil
}

func (fakeActivities) AnalyzeExperiment(_ context.Context, in activities.RunInput) (activities.AnalyzeResult, error) {
	if in.ExperimentID == failingExperiment {
		return activities.AnalyzeResult{}, temporal.NewNonRetryableApplicationError("metric source vanished", "BadRunKey", nil)
	}
	return activities.AnalyzeResult{Users: 200, Rows: 2, SRMGate: "pass"}, nil
}

func (fakeActivities) PublishResults(context.Context, activities.RunInput) (activities.PublishResult, error) {
	return activities.PublishResult{Rows: 2}, nil
}

func (fakeActivities) DecideVerdict(context.Context, activities.RunInput) (activities.VerdictResult, error) {
	return activities.VerdictResult{Recommendation: "ship", Variant: "b",
		Reasons: []verdict.Reason{{Code: verdict.ReasonPrimaryBetter, Metric: "conversion", Variant: "b"}}}, nil
}

func (fakeActivities) MarkRunFailed(context.Context, activities.MarkRunFailedInput) (activities.MarkRunFailedResult, error) {
	return activities.MarkRunFailedResult{}, nil
}

func (fakeActivities) ListRunningExperiments(_ context.Context, in activities.ListRunningInput) (activities.ListRunningResult, error) {
	if in.AfterID == "" {
		return activities.ListRunningResult{Experiments: []activities.ExperimentRef{{OrgID: "org-1", ID: "exp-a"}, {OrgID: "org-1", ID: "exp-skipped"}}, Next: "exp-skipped"}, nil
	}
	return activities.ListRunningResult{Experiments: []activities.ExperimentRef{{OrgID: "org-2", ID: failingExperiment}}}, nil
}

func (fakeActivities) ListOrgsForRetention(_ context.Context, in activities.ListOrgsInput) (activities.ListOrgsResult, error) {
	if in.AfterID == "" {
		return activities.ListOrgsResult{Orgs: []activities.RetentionOrg{{ID: "org-1", RetentionDays: 30}, {ID: "org-2", RetentionDays: 90}}, Next: "org-2"}, nil
	}
	return activities.ListOrgsResult{Orgs: []activities.RetentionOrg{{ID: "org-3", RetentionDays: 365}}}, nil
}

func (fakeActivities) PurgeExpired(_ context.Context, in activities.PurgeOrgInput) (activities.PurgeOrgResult, error) {
	return activities.PurgeOrgResult{EventsDeleted: int64(in.RetentionDays), RunsDeleted: 1}, nil
}

func (fakeActivities) DropExpiredPartitions(context.Context, activities.DropPartitionsInput) (activities.DropPartitionsResult, error) {
	return activities.DropPartitionsResult{Partitions: 2, EventsDeleted: 7}, nil
}

func (fakeActivities) CompactEndedDays(context.Context, activities.CompactDaysInput) (activities.CompactDaysResult, error) {
	return activities.CompactDaysResult{Merged: 3}, nil
}

func (fakeActivities) EnsureEventPartitions(_ context.Context, in activities.EnsurePartitionsInput) (activities.EnsurePartitionsResult, error) {
	return activities.EnsurePartitionsResult{Created: []time.Time{in.AsOf.AddDate(0, 0, in.AheadDays)}}, nil
}

func (fakeActivities) StoreKey(context.Context, activities.StoreKeyInput) (activities.StoreKeyResult, error) {
	return activities.StoreKeyResult{KeyID: "key-2", CreatedAt: time.Unix(1_700_000_000, 0).UTC(), RevokedIDs: []string{"key-1"}}, nil
}

func (fakeActivities) SyncIdentity(context.Context, activities.SyncIdentityInput) (activities.SyncIdentityResult, error) {
	return activities.SyncIdentityResult{Applied: true}, nil
}

func (fakeActivities) FetchSubscription(_ context.Context, in activities.FetchSubscriptionInput) (activities.FetchSubscriptionResult, error) {
	return activities.FetchSubscriptionResult{Configured: true, Subscription: billing.Subscription{ID: in.SubscriptionID, Status: "active"}}, nil
}

func (fakeActivities) ApplyPaymentEvent(context.Context, activities.ApplyPaymentEventInput) (activities.ApplyPaymentEventResult, error) {
	return activities.ApplyPaymentEventResult{Outcome: orgs.PlanApplied, Plan: "pro"}, nil
}

func (fakeActivities) ListWebhookSubscribers(context.Context, activities.ListWebhookSubscribersInput) (activities.ListWebhookSubscribersResult, error) {
	return activities.ListWebhookSubscribersResult{EndpointIDs: []string{"ep-1", "ep-gone"}}, nil
}

func (fakeActivities) DeliverWebhook(_ context.Context, in activities.DeliverWebhookInput) (activities.DeliverWebhookResult, error) {
	if in.EndpointID == "ep-gone" {
		return activities.DeliverWebhookResult{Skipped: activities.SkipEndpointGone}, nil
	}
	return activities.DeliverWebhookResult{StatusCode: 200}, nil
}

// lifecycleExperiment is the experiment of the recorded lifecycle history:
// scheduled with start_at past and stop_at two seconds after the first
// read, so the history holds an immediate start, a durable timer, a stop
// and the end (the fake ships it when stopped).
const lifecycleExperiment = "exp-lifecycle"

// recordedLifecycle holds the recorded experiment's status and stop_at.
var recordedLifecycle struct {
	sync.Mutex
	status string
	stopAt *time.Time
}

func (fakeActivities) LoadLifecycle(_ context.Context, in activities.LifecycleInput) (activities.LifecycleState, error) {
	if in.ExperimentID == owedExperiment {
		return activities.LifecycleState{Found: true, Status: "shipped", Version: 4}, nil // the started workflow ends at once
	}
	recordedLifecycle.Lock()
	defer recordedLifecycle.Unlock()
	if recordedLifecycle.status == "" {
		start, stop := time.Unix(1_700_000_000, 0).UTC(), time.Now().Add(2*time.Second).UTC()
		recordedLifecycle.status, recordedLifecycle.stopAt = "scheduled", &stop
		return activities.LifecycleState{Found: true, Status: "scheduled", Version: 1, StartAt: &start, StopAt: &stop}, nil
	}
	return activities.LifecycleState{Found: true, Status: recordedLifecycle.status, Version: 2, StopAt: recordedLifecycle.stopAt}, nil
}

func (fakeActivities) ApplyLifecycle(_ context.Context, in activities.ApplyLifecycleInput) (activities.ApplyLifecycleResult, error) {
	recordedLifecycle.Lock()
	defer recordedLifecycle.Unlock()
	if in.Action == "start" {
		recordedLifecycle.status = "running"
		return activities.ApplyLifecycleResult{Applied: true, Status: "running", Version: 2}, nil
	}
	recordedLifecycle.status = "shipped" // stopped, then shipped by hand: the workflow ends
	return activities.ApplyLifecycleResult{Applied: true, Status: "stopped", Version: 3}, nil
}

func (fakeActivities) ActOnGuardrails(_ context.Context, in activities.RunInput) (activities.GuardrailsResult, error) {
	if in.ExperimentID != "exp-a" {
		return activities.GuardrailsResult{}, nil
	}
	b := guardrails.Breach{Key: guardrails.BreachKey(in.ExperimentID, "error_rate", "b"), Metric: "error_rate", Variant: "b", Control: "a",
		Action: "stop", BadDirection: "increase", MaxChange: 0.05, Relative: true, Low: 0.4, High: 1.2, Effect: 0.8,
		ComputedFor: in.ComputedFor, Stopped: true, StoppedVersion: 2}
	return activities.GuardrailsResult{Breaches: []guardrails.Breach{b},
		SRM: &guardrails.SRMFailure{Key: guardrails.SRMKey(in.ExperimentID, 1), ComputedFor: in.ComputedFor, ExperimentVersion: 1}}, nil
}

func (fakeActivities) ListHealthChecks(_ context.Context, in activities.ListHealthInput) (activities.ListHealthResult, error) {
	return activities.ListHealthResult{Experiments: []activities.ExperimentRef{{OrgID: "org-1", ID: "exp-a"}, {OrgID: "org-1", ID: "exp-b"}}, Deferred: 1}, nil
}

func (f fakeActivities) CheckGuardrailHealth(ctx context.Context, in activities.HealthCheckInput) (activities.GuardrailsResult, error) {
	return f.ActOnGuardrails(ctx, activities.RunInput{OrgID: in.OrgID, ExperimentID: in.ExperimentID, ComputedFor: guardrails.HealthRunName(in.At), WorkflowID: in.WorkflowID})
}

// owedExperiment is owed a lifecycle signal in the recorded Redrive
// histories; redriveEvent is its pending announcement.
const owedExperiment = "exp-owed"

var redriveEvent = webhooks.Event{ID: webhooks.EventID("redrive-replay"), OrgID: "org-1", Type: webhooks.EventExperimentStarted,
	ExperimentID: owedExperiment, OccurredAt: time.Unix(1_700_000_000, 0).UTC(), Data: json.RawMessage(`{"status":"running","version":3,"actor":"user_1"}`)}

// ListPendingAnnouncements pages one event, then none: the first run
// continues as new.
func (fakeActivities) ListPendingAnnouncements(_ context.Context, in activities.PendingAnnouncementsInput) (activities.PendingAnnouncementsResult, error) {
	if in.After != (webhooks.QueueCursor{}) {
		return activities.PendingAnnouncementsResult{}, nil
	}
	next := webhooks.QueueCursor{CreatedAt: redriveEvent.OccurredAt, ID: redriveEvent.ID}
	return activities.PendingAnnouncementsResult{Events: []webhooks.Event{redriveEvent}, Next: next}, nil
}

func (fakeActivities) MarkAnnounced(context.Context, activities.MarkAnnouncedInput) (activities.MarkAnnouncedResult, error) {
	return activities.MarkAnnouncedResult{}, nil
}

func (fakeActivities) PurgeAnnounced(context.Context, activities.PurgeAnnouncedInput) (activities.PurgeAnnouncedResult, error) {
	return activities.PurgeAnnouncedResult{Deleted: 3}, nil
}

func (fakeActivities) ListOwedSignals(_ context.Context, in activities.OwedSignalsInput) (activities.OwedSignalsResult, error) {
	return activities.OwedSignalsResult{Experiments: []activities.OwedSignal{{OrgID: "org-1", ID: owedExperiment, Version: 3}}}, nil
}

func (fakeActivities) MarkSignalsSent(context.Context, activities.SignalsSentInput) (activities.SignalsSentResult, error) {
	return activities.SignalsSentResult{}, nil
}

// ListLiveEvaluators names one live evaluator: the recorded Redrive starts
// its workflow.
func (fakeActivities) ListLiveEvaluators(context.Context, activities.LiveEvaluatorsInput) (activities.LiveEvaluatorsResult, error) {
	return activities.LiveEvaluatorsResult{IDs: []string{"ev-redrive"}}, nil
}

// PollEvaluator hands out two calls, then reports the evaluator deleted
// (a recorded Evaluator history covers a poll, evaluations and the end).
func (fakeActivities) PollEvaluator(_ context.Context, in activities.PollEvaluatorInput) (activities.PollEvaluatorResult, error) {
	if in.Cursor.EventID != "" {
		return activities.PollEvaluatorResult{Deleted: true}, nil
	}
	return activities.PollEvaluatorResult{CallIDs: []string{"call-1", "call-2"},
		Next: activities.EvaluatorCursor{ReceivedAt: time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC), EventID: "call-2"}}, nil
}

func (fakeActivities) EvaluateCalls(_ context.Context, in activities.EvaluateCallsInput) (activities.EvaluateCallsResult, error) {
	return activities.EvaluateCallsResult{Scored: len(in.CallIDs)}, nil
}

func (fakeActivities) EraseTable(_ context.Context, in activities.EraseTableInput) (activities.EraseTableResult, error) {
	return activities.EraseTableResult{Removed: int64(len(in.Table))}, nil
}

func (fakeActivities) CompleteErasure(_ context.Context, _ activities.CompleteErasureInput) (activities.CompleteErasureResult, error) {
	return activities.CompleteErasureResult{Removed: map[string]int64{"events": 5}}, nil
}
