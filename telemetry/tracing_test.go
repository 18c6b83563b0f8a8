package telemetry_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/api"
	"github.com/expd/expd/internal/temporaltest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/telemetry"
	expdworker "github.com/expd/expd/worker"
)

func TestMain(m *testing.M) { temporaltest.Main(m) }

// One manual results run is one trace: the HTTP request's server span is
// the root, and the workflow start, the workflow run and every activity
// of it descend from it, each span's parent in the same trace.
func TestManualRunIsOneConnectedTrace(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	shutdown, err := telemetry.InstallTracing(sdktrace.WithSpanProcessor(spans), "expd-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shutdown(context.Background()) })
	tracing, err := telemetry.TemporalTracing()
	if err != nil {
		t.Fatal(err)
	}

	tenv := temporaltest.Start(t)
	traced, err := client.NewClientFromExisting(tenv.Client, client.Options{Namespace: tenv.Namespace, Interceptors: []interceptor.ClientInterceptor{tracing}})
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.New(t, func(d *api.Deps) { d.Temporal, d.TaskQueue = traced, tenv.TaskQueue })
	w := worker.New(traced, tenv.TaskQueue, worker.Options{WorkflowPanicPolicy: worker.FailWorkflow})
	expdworker.Register(w, &activities.Activities{DB: env.DB})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)

	org := env.NewOrg(t)
	auth := testenv.Bearer(org.MemberToken)
	var exp struct{ ID string }
	env.Do(t, http.MethodPost, "/v1/experiments", resultstest.Config("traced"), auth...).ExpectJSON(t, http.StatusCreated, &exp)
	var started struct {
		WorkflowID string `json:"workflow_id"`
	}
	env.Do(t, http.MethodPost, "/v1/experiments/"+exp.ID+"/runs", nil, auth...).ExpectJSON(t, http.StatusAccepted, &started)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := traced.GetWorkflow(ctx, started.WorkflowID, "").Get(ctx, nil); err != nil {
		t.Fatalf("run workflow: %v", err)
	}

	// The run's child workflow (the results.ready delivery) may still be
	// running when the run ends: wait, within a deadline, until every
	// ended span's parent has ended too, so the check below sees whole
	// subtrees.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !parentsEnded(spans.Ended()); {
		time.Sleep(100 * time.Millisecond)
	}

	var root sdktrace.ReadOnlySpan
	for _, s := range spans.Ended() {
		if s.Name() == "POST /v1/experiments/:id/runs" {
			root = s
		}
	}
	if root == nil {
		t.Fatal("no server span for POST /v1/experiments/:id/runs")
	}
	inTrace := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans.Ended() {
		if s.SpanContext().TraceID() == root.SpanContext().TraceID() {
			inTrace[s.SpanContext().SpanID()] = s
		}
	}
	kinds := map[string]int{}
	for _, s := range inTrace {
		kind, _, _ := strings.Cut(s.Name(), ":")
		kinds[kind]++
		if s == root {
			if s.Parent().IsValid() {
				t.Errorf("server span has a parent %v", s.Parent())
			}
			continue
		}
		if _, ok := inTrace[s.Parent().SpanID()]; !ok {
			t.Errorf("span %q has parent %v outside the trace", s.Name(), s.Parent().SpanID())
		}
	}
	for _, want := range []string{"StartWorkflow", "RunWorkflow", "StartActivity", "RunActivity"} {
		if kinds[want] == 0 {
			t.Errorf("trace has no %s span; spans by kind: %v", want, kinds)
		}
	}
	t.Logf("trace of one manual run: %d spans %v", len(inTrace), kinds)

	// PostgreSQL statements (pgx's tracer, database/dbtrace.go) are spans
	// under the request's span and under the activities' spans.
	if os.Getenv("DATABASE_URL") == "" {
		t.Log("SQLite: no database spans (the pgx tracer is PostgreSQL's)")
		return
	}
	var underRequest, underActivity int
	for _, s := range inTrace {
		if !isDBSpan(s) {
			continue
		}
		parent := inTrace[s.Parent().SpanID()]
		switch {
		case parent == root:
			underRequest++
		case parent != nil && strings.HasPrefix(parent.Name(), "RunActivity"):
			underActivity++
		}
	}
	if underRequest == 0 || underActivity == 0 {
		t.Errorf("database spans: %d under the request span, %d under activity spans; want both > 0", underRequest, underActivity)
	}
	t.Logf("database spans: %d under the request, %d under activities", underRequest, underActivity)
}

func isDBSpan(s sdktrace.ReadOnlySpan) bool {
	for _, a := range s.Attributes() {
		if a.Key == "db.system.name" && a.Value.AsString() == "postgresql" {
			return true
		}
	}
	return false
}

// parentsEnded tells whether the parent of every ended span that has one
// has ended too.
func parentsEnded(ended []sdktrace.ReadOnlySpan) bool {
	ids := map[trace.SpanID]bool{}
	for _, s := range ended {
		ids[s.SpanContext().SpanID()] = true
	}
	for _, s := range ended {
		if s.Parent().IsValid() && !s.Parent().IsRemote() && !ids[s.Parent().SpanID()] {
			return false
		}
	}
	return true
}
