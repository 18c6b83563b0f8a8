package main

import (
	"context"
	"errors"
	"log/slog"
)

// runWorker is `expd worker`: runs expd's workflows and activities against
// external PostgreSQL and Temporal until interrupted.
func runWorker(ctx context.Context, cfg Config, args []string) error {
	if err := newFlagSet("worker").Parse(args); err != nil {
		return err
	}
	if cfg.DatabaseURL == "" || cfg.TemporalAddress == "" {
		return errors.New("DATABASE_URL and TEMPORAL_ADDRESS are required for `expd worker`")
	}
	db, err := openMigratedDB(cfg, "", false)
	if err != nil {
		return err
	}
	tc, err := dialTemporal(ctx, cfg.TemporalAddress, cfg.TemporalNamespace)
	if err != nil {
		return err
	}
	defer tc.Close()
	w, err := startWorker(ctx, tc, cfg.TaskQueue, newActivities(db, cfg))
	if err != nil {
		return err
	}
	defer w.Stop()
	slog.Info("expd worker running", "task_queue", cfg.TaskQueue)
	<-ctx.Done()
	return nil
}
