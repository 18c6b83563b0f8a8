package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/expd/expd/database"
	"github.com/expd/expd/eventcopy"
)

// runMigrate is `expd migrate`: applies pending migrations, stores the
// verdicts older runs lack, seals stored secrets under EXPD_SECRETS_KEY
// (again under the current key during a rotation), and exits. With
// --copy-events-to-clickhouse it then copies the database's events and
// scores into the ClickHouse of CLICKHOUSE_URL, resuming after the last
// checkpoint (eventcopy).
func runMigrate(ctx context.Context, cfg Config, args []string) error {
	fs := newFlagSet("migrate")
	dataDir := fs.String("data-dir", ".expd", "data dir of the SQLite database when DATABASE_URL is unset")
	copyEvents := fs.Bool("copy-events-to-clickhouse", false, "copy the database's events and scores into the ClickHouse of CLICKHOUSE_URL (resumable: it continues after its last checkpoint)")
	copyBatch := fs.Int("copy-batch", 5000, "rows per batch of --copy-events-to-clickhouse")
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
		if *copyEvents {
			return errors.New("--copy-events-to-clickhouse needs CLICKHOUSE_URL")
		}
		return nil
	}
	// CLICKHOUSE_URL: the events' schema on every node of the cluster.
	ch, err := openEvents(ctx, cfg, true)
	if err != nil {
		return fmt.Errorf("clickhouse: %w", err)
	}
	defer ch.Close()
	fmt.Printf("clickhouse schema current on %d shard(s)\n", ch.Shards())
	if !*copyEvents {
		return nil
	}
	printed := map[string]int64{}
	res, err := eventcopy.Copy(ctx, db, ch, ch.Database(), eventcopy.Options{Batch: *copyBatch, Progress: func(p eventcopy.Progress) {
		if p.Read-printed[p.Kind] >= 100_000 {
			printed[p.Kind] = p.Read
			fmt.Printf("copied %s: %d read, %d stored by this run\n", p.Kind, p.Read, p.Stored)
		}
	}})
	if err != nil {
		return fmt.Errorf("copy events to clickhouse: %w", err)
	}
	fmt.Printf("copied events: %d read, %d stored by this run; scores: %d read, %d stored\n",
		res.Events.Read, res.Events.Stored, res.Scores.Read, res.Scores.Stored)
	return nil
}
