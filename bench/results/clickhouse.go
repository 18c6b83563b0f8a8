package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log"
	"net/url"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/bench/benchseed"
	"github.com/expd/expd/clickhouse"
	"github.com/expd/expd/eventcopy"
)

// The ClickHouse to compare with (-clickhouse, -clickhouse-cluster), and
// a database kept by an earlier -keep run (-clickhouse-db).
var chURL, chCluster, chDatabase string

// openClickHouse opens the ClickHouse database the runs read. With
// chDatabase it reopens that kept one; otherwise it migrates a fresh one
// and fills it with the schema's events and scores (eventcopy's keyset
// read, written by raw batch inserts of the same rows: the write path's
// claim probe is the ingest bench's subject, not this one's). stop drops
// a fresh database unless keep.
func openClickHouse(ctx context.Context, db *gorm.DB, dsn, cluster string, keep bool) (*clickhouse.Store, func(), error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, nil, err
	}
	fresh := chDatabase == ""
	if fresh {
		b := make([]byte, 6)
		rand.Read(b)
		chDatabase = "bench_" + hex.EncodeToString(b)
	}
	u.Path = "/" + chDatabase
	s, err := clickhouse.Open(ctx, u.String(), cluster)
	if err != nil {
		return nil, nil, err
	}
	stop := func() {
		if fresh && !keep {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = s.DropDatabase(ctx)
		}
		s.Close()
	}
	if !fresh {
		log.Printf("clickhouse database %s (kept)", chDatabase)
		return s, stop, nil
	}
	if err := s.Migrate(ctx); err != nil {
		stop()
		return nil, nil, err
	}
	raw, err := benchseed.OpenRawClickHouse(dsn, chDatabase, cluster)
	if err != nil {
		stop()
		return nil, nil, err
	}
	defer raw.Close()
	raw.Scores = s
	start := time.Now()
	res, err := eventcopy.Copy(ctx, db, raw, s.Database(), eventcopy.Options{Batch: 200_000})
	if err != nil {
		stop()
		return nil, nil, err
	}
	took := time.Since(start)
	log.Printf("clickhouse database %s: wrote %d events and %d scores (%d shard(s)) in %s: %.0f events/s (read from PostgreSQL, raw batch insert)",
		chDatabase, res.Events.Stored, res.Scores.Stored, s.Shards(), took.Round(time.Millisecond), float64(res.Events.Stored)/took.Seconds())
	return s, stop, nil
}
