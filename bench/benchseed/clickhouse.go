package benchseed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/expd/expd/clickhouse"
	"github.com/expd/expd/ingest"
)

// RawClickHouse writes events into a migrated expd ClickHouse database
// with a plain clickhouse-go batch insert: the events, whose claims the
// schema derives (migration 0003's view), none of the write path's checks
// (no claim probe, no control transaction). The ingest bench's baseline
// and the results bench's seed.
type RawClickHouse struct {
	conn   driver.Conn
	events string // qualified: the Distributed table on a cluster
}

// OpenRawClickHouse connects to the server of dsn for database (sharded
// over cluster when it is not "").
func OpenRawClickHouse(dsn, database, cluster string) (*RawClickHouse, error) {
	opts, err := ch.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	// The store's commit point: every shard holds its rows.
	opts.Settings = ch.Settings{"insert_distributed_sync": 1}
	r := &RawClickHouse{events: database + ".events_local"}
	if cluster != "" {
		r.events = database + ".events"
	}
	if r.conn, err = ch.Open(opts); err != nil {
		return nil, err
	}
	return r, nil
}

// Close closes the connection.
func (r *RawClickHouse) Close() error { return r.conn.Close() }

// Insert writes rows as given (their ReceivedAt kept) in one batch into
// events; the server derives their claims in the same insert.
func (r *RawClickHouse) Insert(ctx context.Context, rows []ingest.EventRow) (int, error) {
	b, err := r.conn.PrepareBatch(ctx, "INSERT INTO "+r.events+" ("+strings.Join(ingest.EventColumns, ", ")+")")
	if err != nil {
		return 0, err
	}
	vals := make([]any, 0, len(ingest.EventColumns))
	for i := range rows {
		row := &rows[i]
		vals = ingest.AppendEventValues(vals[:0], row, row.OrgID, row.ExperimentID)
		vals[ingest.TsColumn], vals[ingest.TsColumn+1] = row.Ts.UnixMicro(), row.ReceivedAt.UnixMicro()
		if err := b.Append(vals...); err != nil {
			b.Abort()
			return 0, fmt.Errorf("raw insert: %w", err)
		}
	}
	if err := b.Send(); err != nil {
		return 0, fmt.Errorf("raw insert: %w", err)
	}
	return len(rows), nil
}

// Exec runs one statement on the connection's server (an INSERT ...
// SELECT through a Distributed table reaches every shard).
func (r *RawClickHouse) Exec(ctx context.Context, query string, args ...any) error {
	return r.conn.Exec(ctx, query, args...)
}

// Query runs one query on the connection's server.
func (r *RawClickHouse) Query(ctx context.Context, query string, args ...any) (driver.Rows, error) {
	return r.conn.Query(ctx, query, args...)
}

// ClickHouseDB is a bench's ClickHouse database: a fresh one, migrated,
// or one an earlier -keep run left.
type ClickHouseDB struct {
	Store *clickhouse.Store
	Name  string
	Fresh bool
}

// OpenClickHouseDB opens database on the ClickHouse of dsn (sharded over
// cluster when set) or, when database is "", migrates a fresh one named
// prefix_<random>. stop drops a fresh database unless keep, and closes
// the store.
func OpenClickHouseDB(ctx context.Context, dsn, cluster, database, prefix string, keep bool) (*ClickHouseDB, func(), error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, nil, err
	}
	c := &ClickHouseDB{Name: database, Fresh: database == ""}
	if c.Fresh {
		b := make([]byte, 6)
		rand.Read(b)
		c.Name = prefix + "_" + hex.EncodeToString(b)
	}
	u.Path = "/" + c.Name
	if c.Store, err = clickhouse.Open(ctx, u.String(), cluster); err != nil {
		return nil, nil, err
	}
	stop := func() {
		if c.Fresh && !keep {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = c.Store.DropDatabase(ctx)
		}
		c.Store.Close()
	}
	// A kept database gets the migrations made since it was filled.
	if err := c.Store.Migrate(ctx); err != nil {
		stop()
		return nil, nil, err
	}
	return c, stop, nil
}
