package temporaltest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
)

// Env is one test's view of the shared server.
type Env struct {
	Client    client.Client // shared by all tests; closed by Main, not by the test
	Namespace string        // the server's namespace, with expd's search attributes
	TaskQueue string        // unique to this Env
	tb        testing.TB
}

// taskQueueSeq keeps task queues unique when a test starts several Envs.
var taskQueueSeq atomic.Int64

// Start returns an Env on the test binary's shared server, starting the
// server on first use. It fails tb when the server cannot start.
func Start(tb testing.TB) *Env {
	tb.Helper()
	server, c, err := sharedServer()
	if err != nil {
		tb.Fatal(err)
	}
	return &Env{
		Client:    c,
		Namespace: server.GetDefaultNamespace(),
		TaskQueue: fmt.Sprintf("%s-%d", taskQueueName(tb.Name()), taskQueueSeq.Add(1)),
		tb:        tb,
	}
}

// NewWorker starts a worker on the Env's task queue with the registrations
// register makes, and stops it when the test ends. Workflow panics and
// non-determinism fail the workflow, so a broken workflow fails its test
// instead of retrying until the test times out.
func (e *Env) NewWorker(register func(worker.Registry)) worker.Worker {
	e.tb.Helper()
	w := worker.New(e.Client, e.TaskQueue, worker.Options{WorkflowPanicPolicy: worker.FailWorkflow})
	register(w)
	if err := w.Start(); err != nil {
		e.tb.Fatalf("temporaltest: start worker on %s: %v", e.TaskQueue, err)
	}
	e.tb.Cleanup(w.Stop)
	return w
}

// Execute runs workflow with in on the Env's task queue (opts may name an
// id) and decodes its result into out, failing the test if it cannot start
// or does not complete.
func (e *Env) Execute(ctx context.Context, t testing.TB, opts client.StartWorkflowOptions, workflow, in, out any) {
	t.Helper()
	opts.TaskQueue = e.TaskQueue
	run, err := e.Client.ExecuteWorkflow(ctx, opts, workflow, in)
	if err != nil {
		t.Fatalf("temporaltest: start %s: %v", opts.ID, err)
	}
	if err := run.Get(ctx, out); err != nil {
		t.Fatalf("temporaltest: workflow %s: %v", run.GetID(), err)
	}
}

// Main runs the package's tests, then stops the shared server.
// Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	stopSharedServer()
	os.Exit(code)
}

// taskQueueName turns a test name into a readable task queue name.
func taskQueueName(testName string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return '-'
	}, testName)
}
