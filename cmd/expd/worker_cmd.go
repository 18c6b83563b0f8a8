package main

import (
	"context"
	"errors"
	"log/slog"
)

// runWorker is `expd worker`: runs expd's workflows and activities against
// external PostgreSQL and Temporal until interrupted.
func runWorker(ctx context.Context, cfg Config, args []string) error {
	fs := newFlagSet("worker")
	metricsAddr := fs.String("metrics-addr", cfg.MetricsAddr, "Prometheus /metrics and /readyz listen address (empty: off)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cfg.DatabaseURL == "" || cfg.TemporalAddress == "" {
		return errors.New("DATABASE_URL and TEMPORAL_ADDRESS are required for `expd worker`")
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
	tc, stop, err := temporalWithWorker(ctx, cfg, cfg.TemporalAddress, db, ch, false)
	if err != nil {
		return err
	}
	defer stop()
	if _, err := serveMetrics(ctx, *metricsAddr, db, tc); err != nil {
		return err
	}
	slog.Info("expd worker running", "task_queue", cfg.TaskQueue)
	<-ctx.Done()
	return nil
}
