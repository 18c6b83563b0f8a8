package guardrails_test

import (
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/audit"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/guardrails"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/webhooks"
)

func f(v float64) *float64 { return &v }

func guardedConfig(name string) experiments.Config {
	cfg := resultstest.Config(name)
	cfg.Metrics[0].Guardrail = &experiments.Guardrail{BadDirection: "increase", MaxChange: 0.05, Relative: true, Action: "stop"}
	cfg.Metrics[1].Guardrail = &experiments.Guardrail{BadDirection: "decrease", MaxChange: 0.01, Action: "alert"}
	return cfg
}

// The rule reads the headline interval on its scale: relative for a
// relative rule, absolute otherwise; an undefined interval breaches nothing.
func TestEvaluateReadsTheHeadlineIntervalOnTheRulesScale(t *testing.T) {
	cfg := guardedConfig("eval")
	rows := []results.Row{
		{Metric: "latency_ms", Variant: "treatment", ControlVariant: "control", CILow: 5, CIHigh: 30, RelLift: f(0.1), RelCILow: f(0.06), RelCIHigh: f(0.14), ComputedFor: "2026-01-02"},
		{Metric: "latency_ms", Variant: "t2", CILow: 5, CIHigh: 30, RelLift: f(0.1), RelCILow: f(0.04), RelCIHigh: f(0.14)}, // allowed change inside
		{Metric: "latency_ms", Variant: "t3", CILow: 5, CIHigh: 30},                                                         // no relative interval
		{Metric: "conversion", Variant: "treatment", CILow: -0.2, CIHigh: -0.02, Effect: -0.1},
		{Metric: "conversion", Variant: "t4", CILow: -0.2, CIHigh: -0.02, Undefined: "no users"},
		{Metric: "revenue", Variant: "treatment", CILow: -100, CIHigh: -50}, // no rule
	}
	got := guardrails.Evaluate("exp", cfg, rows)
	if len(got) != 2 {
		t.Fatalf("breaches %+v", got)
	}
	if b := got[0]; b.Metric != "latency_ms" || b.Variant != "treatment" || b.Low != 0.06 || b.High != 0.14 || b.Effect != 0.1 ||
		b.Action != "stop" || b.Key != guardrails.BreachKey("exp", "latency_ms", "treatment") || b.ComputedFor != "2026-01-02" {
		t.Fatalf("relative breach %+v", b)
	}
	if b := got[1]; b.Metric != "conversion" || b.Low != -0.2 || b.High != -0.02 || b.Action != "alert" {
		t.Fatalf("absolute breach %+v", b)
	}
}

// A stop breach stops the running experiment once, as system with the
// run's workflow id, with the numbers in the audit log; a retry of the
// same workflow reports it again (to announce with the same id) without
// acting, and another run does not act at all.
func TestActStopsOnceAndRecordsWhy(t *testing.T) {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	exp := resultstest.Experiment(t, db, org.ID, guardedConfig("act"))
	rows := []results.Row{
		{Metric: "latency_ms", Variant: "treatment", ControlVariant: "control", RelLift: f(0.3), RelCILow: f(0.2), RelCIHigh: f(0.4), ComputedFor: "2026-01-02"},
		{Metric: "conversion", Variant: "treatment", ControlVariant: "control", CILow: -0.2, CIHigh: -0.05, ComputedFor: "2026-01-02"},
	}
	breaches := guardrails.Evaluate(exp.ID, exp.Config, rows)
	run := guardrails.Run{OrgID: org.ID, ExperimentID: exp.ID, ComputedFor: "2026-01-02", WorkflowID: "results/" + exp.ID + "/2026-01-02"}
	ctx := t.Context()
	acted, err := guardrails.Act(ctx, db, run, breaches, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(acted) != 2 || !acted[0].Stopped || acted[0].StoppedVersion != 2 || acted[1].Stopped {
		t.Fatalf("acted %+v", acted)
	}
	cur, err := experiments.Store{DB: db}.Get(ctx, org.ID, exp.ID)
	if err != nil || cur.Status != experiments.StatusStopped || cur.Version != 2 || cur.StatusReason == "" {
		t.Fatalf("after the breach %+v (%v)", cur, err)
	}
	entries := func() []audit.View {
		page, err := audit.List(ctx, db, org.ID, audit.Query{ExperimentID: exp.ID, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		return page.Entries
	}
	log := entries()
	counts := map[string]int{}
	for _, e := range log {
		counts[e.Action]++
		if e.Action != audit.ExperimentCreated && (e.Actor != audit.SystemActor || e.WorkflowID != run.WorkflowID) {
			t.Fatalf("entry %+v: want actor system with the run's workflow", e)
		}
	}
	if counts[audit.GuardrailBreached] != 2 || counts[audit.ExperimentStopped] != 1 {
		t.Fatalf("audit %v", counts)
	}

	retry, err := guardrails.Act(ctx, db, run, breaches, time.Now())
	if err != nil || len(retry) != 2 || !retry[0].Stopped || retry[0].StoppedVersion != 2 {
		t.Fatalf("retry acted %+v (%v)", retry, err)
	}
	other := run
	other.ComputedFor, other.WorkflowID = "manual-2026-01-03T00:00:00Z", "results/"+exp.ID+"/manual-2026-01-03T00:00:00Z"
	again, err := guardrails.Act(ctx, db, other, breaches, time.Now())
	if err != nil || len(again) != 0 {
		t.Fatalf("a second run acted %+v (%v)", again, err)
	}
	if n := len(entries()); n != len(log) {
		t.Fatalf("audit grew from %d to %d entries", len(log), n)
	}
	if cur, _ := (experiments.Store{DB: db}).Get(ctx, org.ID, exp.ID); cur.Version != 2 {
		t.Fatalf("version %d after repeated runs", cur.Version)
	}

	// Each action's announcement was queued in the outbox with it, once,
	// under the id the run's workflow announces it with.
	want := map[string]string{}
	for _, b := range acted {
		ev, err := b.Event(run, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		want[ev.ID] = webhooks.EventGuardrailBreached
	}
	stop, _, err := webhooks.LifecycleEvent(org.ID, exp.ID, time.Now(), webhooks.LifecycleData{Status: "stopped", Version: 2})
	if err != nil {
		t.Fatal(err)
	}
	want[stop.ID] = webhooks.EventExperimentStopped
	queued, err := webhooks.Queued(ctx, db, org.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(queued) != len(want) {
		t.Fatalf("queued %+v, want %v", queued, want)
	}
	for _, q := range queued {
		if want[q.ID] != q.Type || q.SentAt != nil || q.ExperimentID != exp.ID {
			t.Fatalf("queued %+v, want one of %v, pending", q, want)
		}
		if q.Type == webhooks.EventExperimentStopped && !strings.Contains(string(q.Data), `"workflow_id":"`+run.WorkflowID+`"`) {
			t.Fatalf("stop announcement %s", q.Data)
		}
	}
}

// A failed SRM gate is recorded once per experiment version.
func TestActOnSRMAlertsOncePerVersion(t *testing.T) {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	exp := resultstest.Experiment(t, db, org.ID, guardedConfig("srm"))
	run := guardrails.Run{OrgID: org.ID, ExperimentID: exp.ID, ComputedFor: "2026-01-02", WorkflowID: "w1"}
	srm := results.SRMSummary{Gate: stats.GateFail, PValue: 1e-6, ChiSquare: 30}
	if got, err := guardrails.ActOnSRM(t.Context(), db, run, results.SRMSummary{Gate: stats.GatePass}, 1, time.Now()); err != nil || got != nil {
		t.Fatalf("passing gate: %+v %v", got, err)
	}
	first, err := guardrails.ActOnSRM(t.Context(), db, run, srm, 1, time.Now())
	if err != nil || first == nil || first.Key != guardrails.SRMKey(exp.ID, 1) {
		t.Fatalf("first failure: %+v %v", first, err)
	}
	run2 := run
	run2.ComputedFor, run2.WorkflowID = "2026-01-03", "w2"
	if again, err := guardrails.ActOnSRM(t.Context(), db, run2, srm, 1, time.Now()); err != nil || again != nil {
		t.Fatalf("second run alerted again: %+v %v", again, err)
	}
	if next, err := guardrails.ActOnSRM(t.Context(), db, run2, srm, 2, time.Now()); err != nil || next == nil {
		t.Fatalf("a new version was not alerted: %+v %v", next, err)
	}
	// One srm.failed queued per alert, with the alert.
	queued, err := webhooks.Queued(t.Context(), db, org.ID)
	if err != nil || len(queued) != 2 || queued[0].Type != webhooks.EventSRMFailed || queued[1].Type != webhooks.EventSRMFailed || queued[0].ID == queued[1].ID {
		t.Fatalf("queued %+v (%v)", queued, err)
	}
}
