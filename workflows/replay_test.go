package workflows_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/billing"
	"github.com/expd/expd/internal/temporaltest"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/results"
	"github.com/expd/expd/webhooks"
	expdworker "github.com/expd/expd/worker"
	"github.com/expd/expd/workflows"
)

// historiesDir holds workflow histories recorded from the in-process
// server. Replaying them against today's code fails when an edit changes
// the commands a workflow issues (a non-deterministic change), which would
// otherwise break running workflows in production after a deploy.
const historiesDir = "testdata/histories"

// Every history replays without a non-determinism error, and every
// workflow the worker registers has at least one recorded history.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(historiesDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no histories in %s (%v): record them with EXPD_RECORD_HISTORIES=1", historiesDir, err)
	}
	logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	covered := map[string]bool{}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			replayer := worker.NewWorkflowReplayer()
			expdworker.Register(workflowsOnly{replayer}, nil)
			if err := replayer.ReplayWorkflowHistoryFromJSONFile(logger, f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
			covered[historyWorkflowType(t, f)] = true
		})
	}
	names := &workflowNames{}
	expdworker.Register(names, nil)
	for _, name := range names.list {
		if !covered[name] {
			t.Errorf("workflow %s has no recorded history in %s: add a scenario to TestRecordHistories and record with EXPD_RECORD_HISTORIES=1", name, historiesDir)
		}
	}
}

// historyWorkflowType reads the workflow type of a recorded history.
func historyWorkflowType(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil || len(h.Events) == 0 {
		t.Fatalf("read %s: %v", file, err)
	}
	return h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName()
}

// workflowNames collects the names of the workflows a registration makes.
type workflowNames struct {
	workflowsOnly
	list []string
}

func (n *workflowNames) RegisterWorkflow(w any) {
	full := runtime.FuncForPC(reflect.ValueOf(w).Pointer()).Name()
	n.list = append(n.list, full[strings.LastIndex(full, ".")+1:])
}

func (n *workflowNames) RegisterWorkflowWithOptions(w any, o workflow.RegisterOptions) {
	if o.Name != "" {
		n.list = append(n.list, o.Name)
		return
	}
	n.RegisterWorkflow(w)
}

func (n *workflowNames) RegisterDynamicWorkflow(any, workflow.DynamicRegisterOptions) {}

// historyScenario is one recorded workflow execution.
type historyScenario struct {
	file     string
	id       string
	workflow any
	input    any
	lastRun  bool // record the last run of a continue-as-new chain, not the first
	signal   any  // sent on workflows.LifecycleSignal right after the start
}

func historyScenarios() []historyScenario {
	ev := billing.Event{ID: "evt_replay", Type: billing.EventSubscriptionUpdated, Created: time.Unix(1_700_000_000, 0).UTC(),
		OrgID: "org-1", SubscriptionID: "sub_1", Status: "active", Plan: "pro"}
	// A manual run asked for within a second: its window ends at the next
	// whole second, which the workflow waits for (a timer in the history).
	soon := results.ManualKey(time.Now().Add(1500 * time.Millisecond)).ComputedFor
	return []historyScenario{
		{file: manualWaitHistory, id: "results/exp-a/" + soon, workflow: workflows.ExperimentResults,
			input: workflows.ExperimentResultsInput{OrgID: "org-1", ExperimentID: "exp-a", ComputedFor: soon}},
		{file: "experiment_results.json", id: "results/exp-a/manual-2026-01-02T10:00:00Z", workflow: workflows.ExperimentResults,
			input: workflows.ExperimentResultsInput{OrgID: "org-1", ExperimentID: "exp-a", ComputedFor: "manual-2026-01-02T10:00:00Z"}},
		{file: "experiment_lifecycle.json", id: workflows.ExperimentWorkflowID(lifecycleExperiment), workflow: workflows.Experiment,
			input:  workflows.ExperimentInput{OrgID: "org-1", ExperimentID: lifecycleExperiment},
			signal: workflows.LifecycleChange{Status: "stopped", Version: 9, Actor: "user_1"}},
		{file: "experiment_results_skipped.json", id: "results/exp-skipped/2026-01-02", workflow: workflows.ExperimentResults,
			input: workflows.ExperimentResultsInput{OrgID: "org-1", ExperimentID: "exp-skipped", ComputedFor: "2026-01-02"}},
		{file: "experiment_results_failed.json", id: "results/" + failingExperiment + "/2026-01-02", workflow: workflows.ExperimentResults,
			input: workflows.ExperimentResultsInput{OrgID: "org-2", ExperimentID: failingExperiment, ComputedFor: "2026-01-02"}},
		{file: "daily_results_first_page.json", id: "daily-results-replay", workflow: workflows.DailyResults,
			input: workflows.DailyResultsInput{Day: "2026-01-03"}},
		{file: "daily_results_last_page.json", id: "daily-results-replay-last", workflow: workflows.DailyResults,
			input: workflows.DailyResultsInput{Day: "2026-01-04"}, lastRun: true},
		{file: "retention_first_page.json", id: "retention-replay", workflow: workflows.Retention,
			input: workflows.RetentionInput{AsOf: time.Date(2026, 1, 5, 1, 30, 0, 0, time.UTC)}},
		{file: "retention_last_page.json", id: "retention-replay-last", workflow: workflows.Retention,
			input: workflows.RetentionInput{AsOf: time.Date(2026, 1, 6, 1, 30, 0, 0, time.UTC)}, lastRun: true},
		{file: "retention_partitions_first_page.json", id: "retention-partitions-replay", workflow: workflows.Retention,
			input: workflows.RetentionInput{AsOf: time.Date(2026, 1, 7, 1, 30, 0, 0, time.UTC)}},
		{file: "event_partitions.json", id: "event-partitions-replay", workflow: workflows.EventPartitions,
			input: workflows.EventPartitionsInput{AsOf: time.Date(2026, 1, 7, 0, 10, 0, 0, time.UTC)}},
		{file: "key_rotation.json", id: workflows.KeyRotationID("org-1", "secret"), workflow: workflows.KeyRotation,
			input: workflows.KeyRotationInput{OrgID: "org-1", Scope: auth.Secret, Hash: "3b1f…hash-only", Prefix: "sk_abcd", Actor: "user_1"}},
		{file: "identity_sync.json", id: workflows.IdentitySyncID("msg_replay"), workflow: workflows.IdentitySync,
			input: workflows.IdentitySyncInput{SvixID: "msg_replay", Change: orgs.IdentityChange{At: 1_700_000_000_000,
				Org: &orgs.OrgData{ClerkOrgID: "org_clerk_1", Name: "Acme", Slug: "acme"}}}},
		{file: "payment_event.json", id: workflows.PaymentEventID(ev.ID), workflow: workflows.PaymentEvent,
			input: workflows.PaymentEventInput{Event: ev}},
		{file: "guardrail_health.json", id: "guardrail-health-replay", workflow: workflows.GuardrailHealth,
			input: workflows.GuardrailHealthInput{At: time.Date(2026, 1, 2, 10, 15, 0, 0, time.UTC)}},
		{file: "redrive_first_page.json", id: "redrive-replay", workflow: workflows.Redrive, input: workflows.RedriveInput{}},
		{file: "redrive_last_page.json", id: "redrive-replay-last", workflow: workflows.Redrive, input: workflows.RedriveInput{}, lastRun: true},
		{file: "redrive_evaluators.json", id: "redrive-replay-evaluators", workflow: workflows.Redrive, input: workflows.RedriveInput{}, lastRun: true},
		{file: "evaluator.json", id: workflows.EvaluatorID("ev-replay"), workflow: workflows.Evaluator,
			input: workflows.EvaluatorInput{EvaluatorID: "ev-replay"}},
		{file: "erasure.json", id: workflows.ErasureWorkflowID("org-1", "5e3c0hash0only"), workflow: workflows.Erasure,
			input: workflows.ErasureInput{ErasureID: "erasure-replay"}},
		{file: "deliver_event.json", id: workflows.DeliverEventID(webhooks.EventID("replay")), workflow: workflows.DeliverEvent,
			input: workflows.DeliverEventInput{Event: webhooks.Event{ID: webhooks.EventID("replay"), OrgID: "org-1", Type: webhooks.EventExperimentStopped,
				ExperimentID: "exp-a", OccurredAt: time.Unix(1_700_000_000, 0).UTC(), Data: json.RawMessage(`{"experiment_id":"exp-a"}`)}}},
	}
}

// manualWaitHistory is a manual run recorded with the wait for its
// window's end (workflow version "manual-wait").
const manualWaitHistory = "experiment_results_manual_wait.json"

// The recorded manual run waited, on a durable timer, for the whole
// second its window ends at before loading its plan; the histories
// recorded before the wait replay without one (TestReplayRecordedHistories).
func TestManualRunHistoryWaitsForItsWindowsEnd(t *testing.T) {
	f, err := os.Open(filepath.Join(historiesDir, manualWaitHistory))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()
	var run workflows.ExperimentResultsInput
	if len(in) != 1 || json.Unmarshal(in[0].GetData(), &run) != nil {
		t.Fatalf("input of %s: %v", manualWaitHistory, in)
	}
	key, err := results.ParseKey(run.ComputedFor)
	if err != nil {
		t.Fatal(err)
	}
	var fired time.Time
	for _, ev := range h.Events {
		switch ev.GetEventType() {
		case enums.EVENT_TYPE_TIMER_FIRED:
			fired = ev.GetEventTime().AsTime()
		case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if fired.IsZero() || fired.Before(key.WindowEnd) {
				t.Fatalf("%s: activity %s scheduled before the window's end %s (timer fired at %v)",
					manualWaitHistory, ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName(), key.WindowEnd, fired)
			}
			return
		}
	}
	t.Fatalf("%s schedules no activity", manualWaitHistory)
}

// TestRecordHistories rewrites testdata/histories from runs on the
// in-process server. Run it after an intended workflow change (with a
// versioning guard where running workflows need one) or for a new workflow:
//
//	EXPD_RECORD_HISTORIES=1 go test ./workflows -run TestRecordHistories
//
// EXPD_RECORD_ONLY=a.json,b.json records only those scenarios, keeping the
// other files as recorded by the code of their day.
func TestRecordHistories(t *testing.T) {
	if os.Getenv("EXPD_RECORD_HISTORIES") != "1" {
		t.Skip("set EXPD_RECORD_HISTORIES=1 to record workflow histories")
	}
	env := temporaltest.Start(t)
	w := env.NewWorker(func(r worker.Registry) {
		expdworker.Register(workflowsOnly{r}, nil)
		r.RegisterActivity(&fakeActivities{})
	})
	_ = w
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	only := os.Getenv("EXPD_RECORD_ONLY") // comma-separated file names; empty: all
	for _, sc := range historyScenarios() {
		if only != "" && !slices.Contains(strings.Split(only, ","), sc.file) {
			continue
		}
		run, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: sc.id, TaskQueue: env.TaskQueue}, sc.workflow, sc.input)
		if err != nil {
			t.Fatalf("%s: start: %v", sc.file, err)
		}
		if sc.signal != nil {
			if err := env.Client.SignalWorkflow(ctx, sc.id, "", workflows.LifecycleSignal, sc.signal); err != nil {
				t.Fatalf("%s: signal: %v", sc.file, err)
			}
		}
		runID := run.GetRunID() // Get follows continue-as-new and moves it
		_ = run.Get(ctx, nil)   // failure scenarios end in an error on purpose
		if sc.lastRun {
			runID = ""
		}
		writeHistory(ctx, t, env.Client, sc.id, runID, filepath.Join(historiesDir, sc.file))
	}
}

func writeHistory(ctx context.Context, t *testing.T, c client.Client, id, runID, file string) {
	t.Helper()
	it := c.GetWorkflowHistory(ctx, id, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", id, err)
		}
		h.Events = append(h.Events, ev)
	}
	b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s (%d events)", file, len(h.Events))
}
