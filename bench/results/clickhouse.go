package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log"
	"net/url"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/clickhouse"
	"github.com/expd/expd/eventcopy"
)

// The ClickHouse to compare with (-clickhouse, -clickhouse-cluster).
var chURL, chCluster string

// copyToClickHouse migrates a fresh database on the ClickHouse of dsn
// (dropped by stop) and copies the schema's events and scores into it the
// way `expd migrate --copy-events-to-clickhouse` does, logging the rate.
func copyToClickHouse(ctx context.Context, db *gorm.DB, dsn, cluster string) (*clickhouse.Store, func(), error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, nil, err
	}
	b := make([]byte, 6)
	rand.Read(b)
	u.Path = "/bench_" + hex.EncodeToString(b)
	s, err := clickhouse.Open(ctx, u.String(), cluster)
	if err != nil {
		return nil, nil, err
	}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = s.DropDatabase(ctx)
		s.Close()
	}
	if err := s.Migrate(ctx); err != nil {
		stop()
		return nil, nil, err
	}
	start := time.Now()
	res, err := eventcopy.Copy(ctx, db, s, s.Database(), eventcopy.Options{Batch: 50_000})
	if err != nil {
		stop()
		return nil, nil, err
	}
	took := time.Since(start)
	log.Printf("copied %d events and %d scores to clickhouse (%d shard(s)) in %s: %.0f events/s",
		res.Events.Stored, res.Scores.Stored, s.Shards(), took.Round(time.Millisecond), float64(res.Events.Stored)/took.Seconds())
	return s, stop, nil
}
