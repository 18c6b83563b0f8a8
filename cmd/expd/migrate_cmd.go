package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/expd/expd/database"
)

// runMigrate is `expd migrate`: applies pending migrations, stores the
// verdicts older runs lack, seals stored secrets under EXPD_SECRETS_KEY
// (again under the current key during a rotation), and exits.
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
	m, err := migrate(ctx, db, cfg.Secrets)
	if err != nil {
		return err
	}
	fmt.Printf("applied %d migration(s): %v\n", len(m.Applied), m.Applied)
	fmt.Printf("stored the verdict of %d run(s) published before verdicts\n", m.Verdicts)
	fmt.Printf("sealed %d secret(s) stored in clear, sealed %d again under the current EXPD_SECRETS_KEY; %d open under no configured key\n",
		m.Secrets.Sealed, m.Secrets.Resealed, m.Secrets.Lost)
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
