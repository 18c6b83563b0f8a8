package devserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/primitives"
	"go.temporal.io/server/temporal"

	"github.com/expd/expd/workflowclient"
)

// readyProbeInterval paces the wait for the namespace to be served.
const readyProbeInterval = 100 * time.Millisecond

// Server is a running Temporal server, and UI unless disabled.
type Server struct {
	temporal        temporal.Server
	ui              *uiserver.Server
	frontendAddress string
	httpAddress     string
	uiAddress       string
	logLevel        *slog.LevelVar // of Temporal's logs, raised and lowered by phase
}

// Start starts the Temporal server (and UI) described by opt and returns once
// the frontend accepts connections and the namespace, with expd's search
// attributes, is served. ctx bounds the start only, not the server's life.
func Start(ctx context.Context, opt Options) (*Server, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	sql := sqlConfig(opt.databasePath())
	if err := prepareStore(sql, clusterName, opt.Namespace); err != nil {
		return nil, err
	}
	// The UI's port is held from here, so a taken one fails before the slow
	// Temporal start, and the UI server is handed the held listener (newUIServer).
	var uiListener net.Listener
	if opt.UIPort != UIDisabled {
		if uiListener, err = reservePort(opt.Host, opt.UIPort, "UI"); err != nil {
			return nil, err
		}
		defer func() {
			if uiListener != nil {
				_ = uiListener.Close()
			}
		}()
		opt.UIPort = uiListener.Addr().(*net.TCPAddr).Port
	}
	logLevel := new(slog.LevelVar)
	logLevel.Set(startingLogLevel)
	logger := newTemporalLogger(opt.Logger, logLevel)
	srv, listeners, err := startTemporal(opt, sql, logger)
	if err != nil {
		return nil, err
	}
	frontend := listeners[primitives.FrontendService]
	s := &Server{
		temporal:        srv,
		frontendAddress: frontend.address(),
		httpAddress:     frontend.httpAddress(),
		logLevel:        logLevel,
	}
	if err := s.awaitReady(ctx, opt.Namespace, logger); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	if uiListener != nil {
		s.uiAddress = "http://" + hostPort(dialHost(opt.Host), opt.UIPort)
		if s.ui, err = newUIServer(opt, s.frontendAddress, uiListener); err != nil {
			return nil, errors.Join(err, s.Stop())
		}
		uiListener = nil // the UI server closes it when it stops
		if err := startUI(ctx, s.ui, s.uiAddress); err != nil {
			return nil, errors.Join(err, s.Stop())
		}
	}
	logLevel.Set(runningLogLevel)
	return s, nil
}

// startAttempts bounds how often Start builds the Temporal server on fresh
// ports after losing one to another process.
const startAttempts = 5

// startTemporal builds and starts the Temporal server on reserved ports.
// Temporal opens its listeners itself, so the ports are released just before
// the build, and another process (a second `expd dev` starting at the same
// moment) can take one in between. Temporal reports such a bind only as a
// Fatal log line, after which a service panics on its nil listener; the
// build turns that Fatal into an error before any service runs
// (buildServer), and a build that lost a port is tried again on fresh ports.
// That needs every Temporal port to be one Start picks: a failed build's
// listeners stay open (Temporal cannot close a server it did not finish
// building), so a port fixed by the options could not be bound again, and
// the error is returned as it is.
func startTemporal(opt Options, sql *config.SQL, logger slogLogger) (temporal.Server, serviceListeners, error) {
	retry := opt.FrontendPort == 0 && opt.HTTPPort == 0
	for attempt := 1; ; attempt++ {
		srv, listeners, err := startTemporalOnce(opt, sql, logger)
		if err == nil || !retry || !errors.Is(err, errPortTaken) || attempt == startAttempts {
			return srv, listeners, err
		}
		opt.Logger.Warn("devserver: a port was taken before Temporal bound it; starting again on fresh ports",
			"attempt", attempt, "error", err)
	}
}

func startTemporalOnce(opt Options, sql *config.SQL, logger slogLogger) (temporal.Server, serviceListeners, error) {
	var held reservations
	listeners, err := reserveServiceListeners(opt, &held)
	held.release()
	if err != nil {
		return nil, nil, err
	}
	if opt.beforeBuild != nil {
		opt.beforeBuild(listeners)
	}
	srv, err := buildServer(sql, listeners, logger)
	if err != nil {
		if isAddressInUse(err) {
			err = fmt.Errorf("%w: %w", errPortTaken, err)
		}
		return nil, nil, fmt.Errorf("devserver: build Temporal server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, nil, fmt.Errorf("devserver: start Temporal server: %w", err)
	}
	return srv, listeners, nil
}

// buildServer builds the Temporal server, which binds its listeners, and
// fails when Temporal logged a Fatal meanwhile (a listener that could not
// bind). A panic after such a Fatal is its consequence (a constructor using
// the nil listener) and fails the build too; any other panic is not ours to
// hide.
func buildServer(sql *config.SQL, listeners serviceListeners, logger slogLogger) (srv temporal.Server, err error) {
	logger, fatal := logger.withFatalRecord()
	defer func() {
		logged := fatal.first()
		if r := recover(); r != nil {
			if logged == nil {
				panic(r)
			}
			srv, err = nil, fmt.Errorf("%w (then: %v)", logged, r)
		} else if logged != nil {
			srv, err = nil, logged
		}
	}()
	return temporal.NewServer(serverOptions(sql, listeners, logger)...)
}

// awaitReady dials the frontend, waits until it serves the namespace and
// makes sure expd's search attributes are registered.
func (s *Server) awaitReady(ctx context.Context, namespace string, logger slogLogger) error {
	c, err := client.DialContext(ctx, client.Options{
		HostPort:  s.frontendAddress,
		Namespace: namespace,
		Logger:    sdklog.NewStructuredLogger(logger.SLog()),
	})
	if err != nil {
		return fmt.Errorf("devserver: connect to frontend %s: %w", s.frontendAddress, err)
	}
	defer c.Close()
	for {
		_, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("devserver: wait for namespace %q: %w (last error: %v)", namespace, ctx.Err(), err)
		case <-time.After(readyProbeInterval):
		}
	}
	if err := workflowclient.EnsureSearchAttributes(ctx, c, namespace); err != nil {
		return fmt.Errorf("devserver: %w", err)
	}
	return nil
}

// FrontendAddress is the host:port of the frontend gRPC API.
func (s *Server) FrontendAddress() string { return s.frontendAddress }

// FrontendHTTPAddress is the host:port of the frontend HTTP API.
func (s *Server) FrontendHTTPAddress() string { return s.httpAddress }

// UIAddress is the Temporal UI's base URL, "http://host:port", or "" when the UI is disabled.
func (s *Server) UIAddress() string { return s.uiAddress }

// Stop stops the UI and the Temporal server. Temporal's logs are silenced
// first: shutting down fails every in-flight call on purpose.
func (s *Server) Stop() error {
	s.logLevel.Set(stoppingLogLevel)
	if s.ui != nil {
		s.ui.Stop()
	}
	if err := s.temporal.Stop(); err != nil {
		return fmt.Errorf("devserver: stop Temporal server: %w", err)
	}
	return nil
}
