package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"runtime/pprof"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/bench/benchseed"
	"github.com/expd/expd/clickhouse"
	"github.com/expd/expd/ingest"
)

// The ClickHouse to compare with (-clickhouse, -clickhouse-cluster), and
// a database kept by an earlier -keep run (-clickhouse-db).
var chURL, chCluster, chDatabase string

// chProfile is where the CPU profile of the runs on ClickHouse goes
// (-clickhouse-cpuprofile), "" for none.
var chProfile string

// startProfile starts a CPU profile into path (none when path is "");
// stop ends it. The runs on ClickHouse are profiled whole, and one file
// keeps the last run's.
func startProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// openClickHouse opens the ClickHouse database the runs read. With
// chDatabase it reopens that kept one; otherwise it migrates a fresh one
// and fills it with the schema's events (raw batch inserts of the same
// rows: the write path's claim probe is the ingest bench's subject, not
// this one's). stop drops
// a fresh database unless keep.
func openClickHouse(ctx context.Context, db *gorm.DB, dsn, cluster string, keep bool) (*clickhouse.Store, func(), error) {
	chDB, stop, err := benchseed.OpenClickHouseDB(ctx, dsn, cluster, chDatabase, "bench", keep)
	if err != nil {
		return nil, nil, err
	}
	s := chDB.Store
	chDatabase = chDB.Name
	if !chDB.Fresh {
		log.Printf("clickhouse database %s (kept)", chDatabase)
		return s, stop, compact(ctx, s)
	}
	raw, err := benchseed.OpenRawClickHouse(dsn, chDatabase, cluster)
	if err != nil {
		stop()
		return nil, nil, err
	}
	defer raw.Close()
	start := time.Now()
	n, err := writeEvents(ctx, db, raw)
	if err != nil {
		stop()
		return nil, nil, err
	}
	took := time.Since(start)
	log.Printf("clickhouse database %s: wrote %d events (%d shard(s)) in %s: %.0f events/s (one read of PostgreSQL's events, raw batch inserts)",
		chDatabase, n, s.Shards(), took.Round(time.Millisecond), float64(n)/took.Seconds())
	if err := compact(ctx, s); err != nil {
		stop()
		return nil, nil, err
	}
	return s, stop, nil
}

// compact merges the ended days as the nightly does before its runs
// (activities.CompactEndedDays), so the runs read them without FINAL,
// and logs what it cost (nothing when they are merged already).
func compact(ctx context.Context, s *clickhouse.Store) error {
	start := time.Now()
	merged, err := s.CompactDays(ctx, time.Now(), nil)
	if err != nil {
		return err
	}
	log.Printf("clickhouse: compacted %d (shard, day) partitions in %s", merged, time.Since(start).Round(time.Millisecond))
	return nil
}

// writeEvents streams the schema's events (the bench has no scores) in
// one read and writes them in raw batches of 200,000.
func writeEvents(ctx context.Context, db *gorm.DB, raw *benchseed.RawClickHouse) (int, error) {
	rows, err := db.WithContext(ctx).Model(&ingest.EventRow{}).Rows()
	if err != nil {
		return 0, fmt.Errorf("read events: %w", err)
	}
	defer rows.Close()
	batch := make([]ingest.EventRow, 0, 200_000)
	n := 0
	flush := func() error {
		if _, err := raw.Insert(ctx, batch); err != nil {
			return err
		}
		n, batch = n+len(batch), batch[:0]
		return nil
	}
	for rows.Next() {
		batch = append(batch, ingest.EventRow{})
		if err := db.ScanRows(rows, &batch[len(batch)-1]); err != nil {
			return n, fmt.Errorf("scan events: %w", err)
		}
		if len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("read events: %w", err)
	}
	return n, flush()
}
