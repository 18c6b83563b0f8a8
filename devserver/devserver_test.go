package devserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/common/primitives"

	"github.com/expd/expd/workflows"
)

const (
	testTaskQueue = "devserver-test"
	testOrgID     = "org-devserver-test"
)

func greet(_ workflow.Context, name string) (string, error) {
	return "hello " + name, nil
}

func startServer(t *testing.T, ctx context.Context, dataDir string, uiPort int) *Server {
	t.Helper()
	srv, err := Start(ctx, Options{
		DataDir: dataDir,
		UIPort:  uiPort,
		Logger:  quietLogger(),
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return srv
}

func dial(t *testing.T, ctx context.Context, srv *Server) client.Client {
	t.Helper()
	c, err := client.DialContext(ctx, client.Options{
		HostPort: srv.FrontendAddress(),
		Logger:   sdklog.NewStructuredLogger(quietLogger()),
	})
	if err != nil {
		t.Fatalf("dial %s: %v", srv.FrontendAddress(), err)
	}
	return c
}

// quietLogger keeps test output to warnings and errors.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// runGreeting runs the greet workflow to completion, tagged with an org id.
func runGreeting(t *testing.T, ctx context.Context, c client.Client) client.WorkflowRun {
	t.Helper()
	w := worker.New(c, testTaskQueue, worker.Options{})
	w.RegisterWorkflow(greet)
	if err := w.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	defer w.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        "greet-survives-restart",
		TaskQueue: testTaskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword(workflows.SearchAttributeOrgID).ValueSet(testOrgID),
		),
	}, greet, "expd")
	if err != nil {
		t.Fatalf("start workflow: %v", err)
	}
	var got string
	if err := run.Get(ctx, &got); err != nil {
		t.Fatalf("workflow result: %v", err)
	}
	if got != "hello expd" {
		t.Fatalf("workflow result = %q, want %q", got, "hello expd")
	}
	return run
}

func TestWorkflowHistorySurvivesRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dataDir := t.TempDir()

	first := startServer(t, ctx, dataDir, 0)
	c := dial(t, ctx, first)
	run := runGreeting(t, ctx, c)
	assertUIServesHTML(t, first.UIAddress())
	assertHTTPAPIServesNamespace(t, first.FrontendHTTPAddress(), "default")
	c.Close()
	if err := first.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}

	second := startServer(t, ctx, dataDir, UIDisabled)
	defer second.Stop()
	if second.UIAddress() != "" {
		t.Errorf("UIAddress with UI disabled = %q, want empty", second.UIAddress())
	}
	c = dial(t, ctx, second)
	defer c.Close()
	assertCompletedWithResult(t, ctx, c, run, `"hello expd"`)
	assertFoundByOrgID(t, ctx, c, run.GetID())
}

func assertCompletedWithResult(t *testing.T, ctx context.Context, c client.Client, run client.WorkflowRun, result string) {
	t.Helper()
	iter := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	if !iter.HasNext() {
		t.Fatal("restarted server has no history for the completed workflow")
	}
	event, err := iter.Next()
	if err != nil {
		t.Fatalf("read history: %v", err)
	}
	if event.GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED {
		t.Fatalf("close event = %v, want WorkflowExecutionCompleted", event.GetEventType())
	}
	payloads := event.GetWorkflowExecutionCompletedEventAttributes().GetResult().GetPayloads()
	if len(payloads) != 1 || string(payloads[0].GetData()) != result {
		t.Fatalf("stored result = %v, want one payload %s", payloads, result)
	}
}

// assertFoundByOrgID checks the visibility record and its search attribute survived too.
func assertFoundByOrgID(t *testing.T, ctx context.Context, c client.Client, workflowID string) {
	t.Helper()
	resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: fmt.Sprintf("%s = '%s'", workflows.SearchAttributeOrgID, testOrgID),
	})
	if err != nil {
		t.Fatalf("list workflows by org id: %v", err)
	}
	if len(resp.GetExecutions()) != 1 || resp.GetExecutions()[0].GetExecution().GetWorkflowId() != workflowID {
		t.Fatalf("workflows with %s = %q: %v, want only %s", workflows.SearchAttributeOrgID, testOrgID, resp.GetExecutions(), workflowID)
	}
}

func assertUIServesHTML(t *testing.T, baseURL string) {
	t.Helper()
	if !strings.HasPrefix(baseURL, "http://") {
		t.Fatalf("UIAddress = %q, want an http:// URL", baseURL)
	}
	resp, err := http.Get(baseURL + "/")
	if err != nil {
		t.Fatalf("GET UI: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read UI page: %v", err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(strings.ToLower(string(body)), "<html") {
		t.Fatalf("GET %s/ = %d with %d bytes, want 200 with an HTML page", baseURL, resp.StatusCode, len(body))
	}
}

func assertHTTPAPIServesNamespace(t *testing.T, address, namespace string) {
	t.Helper()
	resp, err := http.Get("http://" + address + "/api/v1/namespaces/" + namespace)
	if err != nil {
		t.Fatalf("GET namespace over the HTTP API: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read HTTP API answer: %v", err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"name":"`+namespace+`"`) {
		t.Fatalf("HTTP API namespace = %d %s, want 200 naming %q", resp.StatusCode, body, namespace)
	}
}

func TestStartRejectsTakenFrontendPort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port

	_, err = Start(context.Background(), Options{DataDir: t.TempDir(), FrontendPort: port})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprint(port)) {
		t.Fatalf("Start on taken port %d: err = %v, want an error naming the port", port, err)
	}
}

func TestStartRequiresDataDir(t *testing.T) {
	_, err := Start(context.Background(), Options{})
	if err == nil || !strings.Contains(err.Error(), "DataDir") {
		t.Fatalf("Start without DataDir: err = %v, want an error naming DataDir", err)
	}
}

func TestTemporalLoggerFollowsThePhaseLevel(t *testing.T) {
	var out strings.Builder
	level := new(slog.LevelVar)
	level.Set(runningLogLevel)
	logger := newTemporalLogger(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})), level)

	logger.Info("chatty startup line")
	logger.Warn("shard lost")
	logger.Fatal("cannot bind")
	level.Set(stoppingLogLevel)
	logger.Error("poll canceled by shutdown")

	got := out.String()
	for _, unwanted := range []string{"chatty startup line", "poll canceled by shutdown"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("log has %q, which its level should drop: %s", unwanted, got)
		}
	}
	for _, want := range []string{`level=WARN msg="shard lost"`, `level=ERROR msg="cannot bind"`} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %s: %s", want, got)
		}
	}
}

// takePort is a beforeBuild hook that plays another process binding one
// service's port between its release and Temporal's bind, on the first
// build only. It records that service's port of every build.
type takePort struct {
	t       *testing.T
	service primitives.ServiceName
	http    bool // the frontend's HTTP API port instead of its gRPC port
	taken   net.Listener
	ports   []int
}

func (h *takePort) beforeBuild(listeners serviceListeners) {
	l := listeners[h.service]
	port := l.port
	if h.http {
		port = l.httpPort
	}
	h.ports = append(h.ports, port)
	if h.taken != nil {
		return
	}
	taken, err := net.Listen("tcp", hostPort(l.bindIP, port))
	if err != nil {
		h.t.Fatalf("take the %s port %d: %v", h.service, port, err)
	}
	h.taken = taken
	h.t.Cleanup(func() { _ = taken.Close() })
}

// A port lost between its reservation and Temporal's bind makes Start build
// the server again on fresh ports: it comes up instead of panicking. The
// worker's lost port is seen only through Temporal's Fatal log line, the
// frontend's through a panic after it, the HTTP API's as an error.
func TestStartRetriesOnFreshPortsWhenAPortIsTakenBeforeTemporalBinds(t *testing.T) {
	for _, hook := range []*takePort{
		{t: t, service: primitives.WorkerService},
		{t: t, service: primitives.FrontendService},
		{t: t, service: primitives.FrontendService, http: true},
	} {
		t.Run(fmt.Sprintf("%s http=%v", hook.service, hook.http), func(t *testing.T) {
			hook.t = t
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			srv, err := Start(ctx, Options{DataDir: t.TempDir(), UIPort: UIDisabled, Logger: quietLogger(), beforeBuild: hook.beforeBuild})
			if err != nil {
				t.Fatalf("Start with a port taken once: %v", err)
			}
			defer srv.Stop()
			if len(hook.ports) != 2 || hook.ports[1] == hook.ports[0] {
				t.Fatalf("ports of the builds: %v, want a second build on another port", hook.ports)
			}
			c := dial(t, ctx, srv)
			defer c.Close()
			if _, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "default"}); err != nil {
				t.Fatalf("describe namespace after the retry: %v", err)
			}
			assertHTTPAPIServesNamespace(t, srv.FrontendHTTPAddress(), "default")
		})
	}
}

// With a frontend port fixed by the options the build is not retried (the
// failed build keeps it bound), but the lost bind is an error, not a panic.
func TestStartReportsALostBindWithAFixedFrontendPort(t *testing.T) {
	var free reservations
	port, err := free.reserve(internalHost, 0, "test")
	free.release()
	if err != nil {
		t.Fatal(err)
	}
	hook := &takePort{t: t, service: primitives.WorkerService}
	_, err = Start(context.Background(), Options{DataDir: t.TempDir(), FrontendPort: port, UIPort: UIDisabled,
		Logger: quietLogger(), beforeBuild: hook.beforeBuild})
	if !errors.Is(err, errPortTaken) || !isAddressInUse(err) || len(hook.ports) != 1 {
		t.Fatalf("Start with the worker port taken: %v after %d builds, want one build failing with address in use", err, len(hook.ports))
	}
}
