package devserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
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
	listeners, err := newServiceListeners(opt)
	if err != nil {
		return nil, err
	}
	logLevel := new(slog.LevelVar)
	logLevel.Set(startingLogLevel)
	logger := newTemporalLogger(opt.Logger, logLevel)
	srv, err := temporal.NewServer(serverOptions(opt, sql, listeners, logger)...)
	if err != nil {
		return nil, fmt.Errorf("devserver: build Temporal server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("devserver: start Temporal server: %w", err)
	}
	s := &Server{
		temporal:        srv,
		frontendAddress: listeners[primitives.FrontendService].address(),
		httpAddress:     listener{bindIP: opt.Host, port: opt.HTTPPort}.address(),
		logLevel:        logLevel,
	}
	if err := s.awaitReady(ctx, opt.Namespace, logger); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	if opt.UIPort != UIDisabled {
		s.uiAddress = "http://" + listener{bindIP: opt.Host, port: opt.UIPort}.address()
		s.ui = newUIServer(opt, s.frontendAddress)
		if err := startUI(ctx, s.ui, s.uiAddress); err != nil {
			return nil, errors.Join(err, s.Stop())
		}
	}
	logLevel.Set(runningLogLevel)
	return s, nil
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
