package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/expd/expd/database"
)

// runMigrate is `expd migrate`: applies pending migrations, stores the
// verdicts older runs lack, and exits.
func runMigrate(ctx context.Context, cfg Config, args []string) error {
	fs := newFlagSet("migrate")
	dataDir := fs.String("data-dir", ".expd", "data dir of the SQLite database when DATABASE_URL is unset")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cfg.DatabaseURL == "" && *dataDir == "" {
		return errors.New("set DATABASE_URL or --data-dir")
	}
	db, err := database.Open(cfg.DatabaseURL, *dataDir)
	if err != nil {
		return err
	}
	applied, decided, err := migrate(ctx, db)
	if err != nil {
		return err
	}
	fmt.Printf("applied %d migration(s): %v\n", len(applied), applied)
	fmt.Printf("stored the verdict of %d run(s) published before verdicts\n", decided)
	if cfg.ClickHouseURL == "" {
		return nil
	}
	// CLICKHOUSE_URL: the events' schema on every node of the cluster.
	ch, err := openEvents(ctx, cfg, true)
	if err != nil {
		return fmt.Errorf("clickhouse: %w", err)
	}
	defer ch.Close()
	fmt.Printf("clickhouse schema current on %d shard(s)\n", ch.Shards())
	return nil
}
