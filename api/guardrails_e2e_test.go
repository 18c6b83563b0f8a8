package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/audit"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/vocab"
	"github.com/expd/expd/webhooks"
)

// receivedEvent is one verified delivery at the test's listener.
type receivedEvent struct {
	ID   string
	Type string
	Body string
}

// webhookListener is a local HTTP listener that accepts only deliveries
// whose Standard Webhooks signature the svix library verifies.
type webhookListener struct {
	mu       sync.Mutex
	events   []receivedEvent
	rejected int
}

func (l *webhookListener) handler(t *testing.T, secret string) http.HandlerFunc {
	wh, err := svix.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		l.mu.Lock()
		defer l.mu.Unlock()
		if err := wh.Verify(body, r.Header); err != nil {
			l.rejected++
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var typed struct{ Type string }
		_ = json.Unmarshal(body, &typed)
		l.events = append(l.events, receivedEvent{ID: r.Header.Get("webhook-id"), Type: typed.Type, Body: string(body)})
		w.WriteHeader(http.StatusNoContent)
	}
}

// ofType returns the distinct event ids received of a type.
func (l *webhookListener) ofType(typ string) []receivedEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]bool{}
	var out []receivedEvent
	for _, e := range l.events {
		if e.Type == typ && !seen[e.ID] {
			seen[e.ID] = true
			out = append(out, e)
		}
	}
	return out
}

// waitUntil polls cond for up to a minute (a bound against a hung test,
// not a timing assertion).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A treatment with a much higher error rate and a guardrail on error_rate
// with action stop: a manual run stops the experiment, /v1/assign and
// /v1/config serve control, the audit log says why (actor system, the
// run's workflow), a signed guardrail.breached reaches a local listener,
// and a second run acts on nothing.
func TestGuardrailStopsAHarmfulTreatmentEndToEnd(t *testing.T) {
	env, _ := testenv.NewWithWorker(t, func(a *activities.Activities) { a.Webhooks = &webhooks.Sender{AllowPrivate: true} })
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)

	exp := harmfulExperiment(t, env, org.ID, admin)
	listener, stopListener := listenForWebhooks(t, env, org.ID)
	defer stopListener()
	time.Sleep(1100 * time.Millisecond) // the run's instant (whole seconds) falls after every event

	started := time.Now()
	run := startRun(t, env, admin, exp.ID)
	waitUntil(t, "experiment stopped", func() bool {
		var cur experimentBody
		env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID, nil, admin...).JSON(t, &cur)
		return cur.Status == "stopped"
	})
	t.Logf("manual run to stopped: %v", time.Since(started).Round(time.Millisecond))
	waitForResultsRun(t, env, admin, exp.ID, run, 2)

	waitFor(t, func() bool { return assignUser(t, env, org.PublishableKey, exp.ID, "u-any").Stopped })
	for i := range 20 {
		if a := assignUser(t, env, org.PublishableKey, exp.ID, fmt.Sprintf("user-%d", i)); a.Variant != "control" || a.Status != "stopped" || a.Reason == "" {
			t.Fatalf("assign after the guardrail stop: %+v", a)
		}
	}
	served := decodeConfig(t, getConfig(t, env, org.PublishableKey))
	if e := served.Experiments[0]; e.Status != "stopped" || len(e.BucketMap) != 1 || e.BucketMap[0].Variant != "control" {
		t.Fatalf("config serves %+v", e)
	}

	entries := auditOf(t, env, admin, exp.ID)
	var breached, stopped *auditEntry
	for i, e := range entries {
		switch e.Action {
		case audit.GuardrailBreached:
			breached = &entries[i]
		case audit.ExperimentStopped:
			stopped = &entries[i]
		}
	}
	wid := "results/" + exp.ID + "/" + run
	if breached == nil || breached.Actor != audit.SystemActor || breached.WorkflowID != wid || !strings.Contains(breached.Summary, "error_rate") {
		t.Fatalf("guardrail audit entry %+v in %+v", breached, entries)
	}
	if stopped == nil || stopped.Actor != audit.SystemActor || stopped.WorkflowID != wid {
		t.Fatalf("stop audit entry %+v", stopped)
	}

	waitUntil(t, "signed guardrail.breached delivery", func() bool { return len(listener.ofType(webhooks.EventGuardrailBreached)) == 1 })
	waitUntil(t, "experiment.stopped and results.ready deliveries", func() bool {
		return len(listener.ofType(webhooks.EventExperimentStopped)) == 1 && len(listener.ofType(webhooks.EventResultsReady)) == 1
	})
	if b := listener.ofType(webhooks.EventGuardrailBreached)[0]; !strings.Contains(b.Body, `"metric":"error_rate"`) || !strings.Contains(b.Body, `"action":"stop"`) {
		t.Fatalf("guardrail.breached body %s", b.Body)
	}

	// A second run sees the same breach and acts on nothing.
	time.Sleep(1100 * time.Millisecond)
	second := startRun(t, env, admin, exp.ID)
	waitForResultsRun(t, env, admin, exp.ID, second, 2)
	waitUntil(t, "second results.ready", func() bool { return len(listener.ofType(webhooks.EventResultsReady)) == 2 })
	if n := len(auditOf(t, env, admin, exp.ID)); n != len(entries) {
		t.Fatalf("the second run added %d audit entries", n-len(entries))
	}
	if n := len(listener.ofType(webhooks.EventGuardrailBreached)); n != 1 {
		t.Fatalf("%d guardrail.breached deliveries after two runs", n)
	}
	var cur experimentBody
	env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID, nil, admin...).JSON(t, &cur)
	if cur.Status != "stopped" || cur.Version != 2 {
		t.Fatalf("after the second run: status %s version %d", cur.Status, cur.Version)
	}
	if listener.rejected != 0 {
		t.Fatalf("%d deliveries failed verification", listener.rejected)
	}
}

// harmfulExperiment creates an experiment with a guardrail on error_rate
// (relative increase of 5 %, action stop) and inserts its events: 300
// users per arm, three calls each; control errs on 5 % of calls,
// treatment on 50 %.
func harmfulExperiment(t *testing.T, env *testenv.Env, orgID string, admin []string) experimentBody {
	t.Helper()
	cfg := resultstest.Config("guarded")
	shared := false
	cfg.Metrics = append(cfg.Metrics[:1:1], experiments.Metric{Name: "error_rate", Kind: "mean", Category: "guardrail", MethodDefault: "welch_t",
		MetricVersion: 1, SharedOrgWide: &shared,
		Guardrail: &experiments.Guardrail{BadDirection: "increase", MaxChange: 0.05, Relative: true, Action: "stop"}})
	var exp experimentBody
	env.Do(t, http.MethodPost, "/v1/experiments", cfg, admin...).ExpectJSON(t, http.StatusCreated, &exp)

	now := time.Now().UTC()
	var events []ingest.EventRow
	for _, u := range resultstest.Users(300, 7) {
		seq := 0
		add := func(typ vocab.RecordType, errText *string) {
			seq++
			events = append(events, ingest.EventRow{OrgID: orgID, EventID: fmt.Sprintf("%s-%d", u.ID, seq), Type: typ, ExperimentID: exp.ID,
				UserID: u.ID, Variant: u.Variant, Ts: now.Add(time.Duration(seq) * time.Millisecond), ReceivedAt: now, Source: "api"})
			events[len(events)-1].Error = errText
		}
		add("exposure", nil)
		for i := range 3 {
			var e *string
			if (u.Variant == "treatment" && (len(u.ID)+i)%2 == 0) || (u.Variant == "control" && (len(u.ID)*7+i)%20 == 0) {
				msg := "upstream 500"
				e = &msg
			}
			latency := u.Latencies[i]
			add("model_call", e)
			events[len(events)-1].LatencyMs = &latency
		}
	}
	resultstest.Insert(t, env.DB, events)
	return exp
}

// listenForWebhooks registers a local listener as the org's webhook endpoint; it
// verifies every delivery's signature with the svix library.
func listenForWebhooks(t *testing.T, env *testenv.Env, orgID string) (*webhookListener, func()) {
	t.Helper()
	listener := &webhookListener{}
	var created webhooks.Created
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		listener.handler(t, created.Secret)(w, r)
	}))
	var err error
	created, err = webhooks.Create(t.Context(), env.DB, env.Deps.Secrets, orgID, webhooks.NewEndpoint{URL: srv.URL, Actor: "user_admin"}, time.Now())
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	return listener, srv.Close
}

func auditOf(t *testing.T, env *testenv.Env, auth []string, experimentID string) []auditEntry {
	t.Helper()
	var page struct{ Entries []auditEntry }
	env.Do(t, http.MethodGet, "/v1/audit?experiment_id="+experimentID+"&limit=200", nil, auth...).ExpectJSON(t, http.StatusOK, &page)
	return page.Entries
}

func startRun(t *testing.T, env *testenv.Env, auth []string, experimentID string) string {
	t.Helper()
	resp := env.Do(t, http.MethodPost, "/v1/experiments/"+experimentID+"/runs", nil, auth...)
	if resp.Status != http.StatusAccepted {
		t.Fatalf("start run: %d %s", resp.Status, resp.Body)
	}
	var run struct {
		RunID string `json:"run_id"`
	}
	resp.JSON(t, &run)
	return run.RunID
}

// start_at and stop_at set through the API are taken by the experiment's
// workflow on the in-process server: scheduled, then running, then
// stopped, each change by actor system from experiment/<id>.
func TestScheduledStartAndStopThroughTheWorkflow(t *testing.T) {
	env, _ := testenv.NewWithWorker(t, nil)
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	cfg := resultstest.Config("scheduled")
	start := time.Now().Add(2 * time.Second).UTC().Truncate(time.Second)
	stop := start.Add(2 * time.Second)
	cfg.StartAt, cfg.StopAt = &start, &stop
	var exp experimentBody
	env.Do(t, http.MethodPost, "/v1/experiments", cfg, admin...).ExpectJSON(t, http.StatusCreated, &exp)
	if exp.Status != "scheduled" {
		t.Fatalf("created %s, want scheduled", exp.Status)
	}
	status := func() string {
		var cur experimentBody
		env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID, nil, admin...).JSON(t, &cur)
		return cur.Status
	}
	waitUntil(t, "running after start_at", func() bool { return status() == "running" })
	if now := time.Now(); now.Before(start) {
		t.Fatalf("started at %v, before start_at %v", now, start)
	}
	waitUntil(t, "stopped after stop_at", func() bool { return status() == "stopped" })
	if now := time.Now(); now.Before(stop) {
		t.Fatalf("stopped at %v, before stop_at %v", now, stop)
	}
	var system int
	for _, e := range auditOf(t, env, admin, exp.ID) {
		if (e.Action == audit.ExperimentStarted || e.Action == audit.ExperimentStopped) && e.Actor == audit.SystemActor && e.WorkflowID == "experiment/"+exp.ID {
			system++
		}
	}
	if system != 2 {
		t.Fatalf("%d system lifecycle entries, want start and stop", system)
	}
}
