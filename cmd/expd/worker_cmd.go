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
	_, stop, err := temporalWithWorker(ctx, cfg, cfg.TemporalAddress, db)
	if err != nil {
		return err
	}
	defer stop()
	slog.Info("expd worker running", "task_queue", cfg.TaskQueue)
	<-ctx.Done()
	return nil
}
