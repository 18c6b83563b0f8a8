package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/api"
)

// runAPI is `expd api`: the HTTP API against external PostgreSQL and
// Temporal. It refuses to start on an unmigrated schema.
func runAPI(ctx context.Context, cfg Config, args []string) error {
	fs := newFlagSet("api")
	addr := fs.String("addr", ":8080", "listen address")
	metricsAddr := fs.String("metrics-addr", cfg.MetricsAddr, "Prometheus /metrics and /readyz listen address (empty: off)")
	fs.StringVar(&cfg.SpoolDir, "ingest-spool-dir", cfg.SpoolDir, "acknowledge events in a local log in this directory and ship them to ClickHouse in large inserts (needs CLICKHOUSE_URL; env INGEST_SPOOL_DIR)")
	fs.DurationVar(&cfg.SpoolLinger, "ingest-spool-linger", cfg.SpoolLinger, "how long the spool's oldest unshipped entry waits for more before a shipment smaller than 100,000 rows goes (env INGEST_SPOOL_LINGER)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cfg.DatabaseURL == "" {
		return errors.New("DATABASE_URL is required for `expd api` (use `expd dev` for the embedded setup)")
	}
	if cfg.TemporalAddress == "" {
		return errors.New("TEMPORAL_ADDRESS is required for `expd api`")
	}
	db, err := openMigratedDB(cfg, "", false)
	if err != nil {
		return err
	}
	ch, err := openEvents(ctx, cfg, false)
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
	verifier, err := identityVerifier(ctx, cfg, false)
	if err != nil {
		return err
	}
	tc, err := dialTemporal(ctx, cfg.TemporalAddress, cfg.TemporalNamespace)
	if err != nil {
		return err
	}
	defer tc.Close()
	if _, err := serveMetrics(ctx, *metricsAddr, db, tc); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	deps, err := apiDeps(ctx, cfg, db, ch, spool, verifier, tc)
	if err != nil {
		return err
	}
	gin.SetMode(gin.ReleaseMode)
	slog.Info("expd api listening", "addr", ln.Addr().String(), "billing_configured", deps.Billing.Configured())
	return serveHTTP(ctx, ln, api.NewRouter(deps))
}
