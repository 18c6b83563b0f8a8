//go:build !noembedded

// The embedded Temporal server and UI (devserver, go.temporal.io/server)
// are linked only into builds without the noembedded tag; the production
// image builds with -tags noembedded (dev_cmd_noembedded.go, Dockerfile).

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/api"
	"github.com/expd/expd/devserver"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/usecases"
)

func init() { commands["dev"] = runDev }

// runDev is `expd dev`: everything in one process on embedded defaults.
func runDev(ctx context.Context, cfg Config, args []string) error {
	fs := newFlagSet("dev")
	addr := fs.String("addr", "127.0.0.1:8080", "API listen address (port 0: a free port)")
	dataDir := fs.String("data-dir", ".expd", "where SQLite files, the dev signing key and dev-credentials.json live")
	temporalPort := fs.Int("temporal-port", 7233, "embedded Temporal frontend gRPC port (0: a free port)")
	temporalHTTPPort := fs.Int("temporal-http-port", 7243, "embedded Temporal frontend HTTP port (0: a free port)")
	uiPort := fs.Int("ui-port", 8233, "Temporal UI port (0: a free port, -1: no UI)")
	metricsAddr := fs.String("metrics-addr", orDefault(cfg.MetricsAddr, "127.0.0.1:0"), "Prometheus /metrics and /readyz listen address (port 0: a free port; empty: off)")
	planFlag := fs.String("plan", os.Getenv("EXPD_DEV_PLAN"), "set the dev org's plan at start, e.g. enterprise to lift the free plan's limits for local load (env EXPD_DEV_PLAN)")
	fs.StringVar(&cfg.SpoolDir, "ingest-spool-dir", cfg.SpoolDir, "acknowledge events in a local log in this directory and ship them to ClickHouse in large inserts (needs CLICKHOUSE_URL; env INGEST_SPOOL_DIR)")
	fs.DurationVar(&cfg.SpoolLinger, "ingest-spool-linger", cfg.SpoolLinger, "how long the spool's oldest unshipped entry waits for more before a shipment smaller than 100,000 rows goes (env INGEST_SPOOL_LINGER)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var plan plans.Name
	if *planFlag != "" {
		p, err := plans.Parse(*planFlag)
		if err != nil {
			return fmt.Errorf("--plan: %w", err)
		}
		plan = p
	}
	dir, err := filepath.Abs(*dataDir)
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}

	if !cfg.Secrets.Configured() {
		if cfg.Secrets, err = devSecretsKey(filepath.Join(dir, secretsKeyFile)); err != nil {
			return err
		}
	}
	db, err := openMigratedDB(cfg, dir, true)
	if err != nil {
		return err
	}
	ch, err := openEvents(ctx, cfg, true)
	if err != nil {
		return err
	}
	if ch != nil {
		defer ch.Close()
	}
	spool, closeSpool, err := openSpool(cfg, db, ch)
	if err != nil {
		return err
	}
	defer closeSpool()

	temporalAddr, uiAddr := cfg.TemporalAddress, ""
	if temporalAddr == "" {
		srv, err := devserver.Start(ctx, devserver.Options{
			DataDir: dir, FrontendPort: *temporalPort, HTTPPort: *temporalHTTPPort, UIPort: *uiPort,
			Namespace: cfg.TemporalNamespace, Logger: slog.Default().With("component", "temporal"),
		})
		if err != nil {
			return fmt.Errorf("start embedded Temporal: %w", err)
		}
		defer srv.Stop()
		temporalAddr, uiAddr = srv.FrontendAddress(), srv.UIAddress()
	}
	tc, stopWorker, err := temporalWithWorker(ctx, cfg, temporalAddr, db, ch, true)
	if err != nil {
		return err
	}
	defer stopWorker()
	metricsAt, err := serveMetrics(ctx, *metricsAddr, db, tc)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	baseURL := "http://" + ln.Addr().String()
	creds, signer, err := devCredentials(ctx, db, dir, baseURL, plan)
	if err != nil {
		return err
	}
	verifier := signer.Verifier()
	if cfg.ClerkJWTKey != "" || cfg.ClerkJWKSURL != "" {
		if verifier, err = identityVerifier(ctx, cfg, true); err != nil {
			return err
		}
	}
	deps, err := apiDeps(ctx, cfg, db, ch, spool, verifier, tc)
	if err != nil {
		return err
	}
	deps.DevToken = creds.IdentityJWT
	// A key rotated while expd dev runs is written to the credentials file,
	// so the next start keeps it instead of issuing yet another key.
	deps.KeyRotated = func(ctx context.Context, orgID string, key usecases.RotatedKey) {
		if err := recordRotatedDevKey(filepath.Join(dir, credentialsFile), creds.OrgID, orgID, key); err != nil {
			slog.ErrorContext(ctx, "dev credentials: record the rotated key", "error", err)
		}
	}
	if deps.TemporalUI == "" {
		deps.TemporalUI = uiAddr
	}
	printDevBanner(creds, temporalAddr, uiAddr, metricsAt, dir)
	gin.SetMode(gin.ReleaseMode)
	return serveHTTP(ctx, ln, api.NewRouter(deps))
}

func printDevBanner(c DevCredentials, temporalAddr, uiAddr, metricsAddr, dir string) {
	b, _ := json.MarshalIndent(c, "", "  ")
	metrics := orNone(metricsAddr)
	if metricsAddr != "" {
		metrics = "http://" + metricsAddr + "/metrics"
	}
	planNote := ""
	if c.Plan == string(plans.Free) {
		planNote = " (limits of the free plan; lift them with --plan enterprise or EXPD_DEV_PLAN=enterprise)"
	}
	fmt.Printf("expd dev is running\n  Dashboard:   %s/\n  API:         %s\n  Temporal:    %s\n  Temporal UI: %s\n  Metrics:     %s\n  data dir:    %s\n  dev org plan: %s%s\n  credentials (also in %s):\n%s\n",
		c.BaseURL, c.BaseURL, temporalAddr, orNone(uiAddr), metrics, dir, c.Plan, planNote, filepath.Join(dir, credentialsFile), b)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "(disabled)"
	}
	return s
}
