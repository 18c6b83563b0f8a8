package clickhousetest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/expd/expd/clickhouse"
)

// Replicated is the replicated test cluster that
// `.ci/clickhouse-cluster.sh start-replicated` starts: one shard of two
// replicas beside a ZooKeeper.
type Replicated struct {
	Cluster  string
	Replicas []string // a DSN of each replica, database set
	Database string
}

// ReplicatedStore opens a store over the replicated test cluster in a
// fresh database whose tables were created the way docs/scale.md
// ("Replication") tells an operator to: the replicated form of expd's
// schema, ON CLUSTER, before `expd migrate` runs. Migrate then keeps them
// and applies what they lack. The servers' profile sets load_balancing
// to in_order, as docs/scale.md recommends: writes through the
// Distributed tables and shard-local reads both go to a shard's first
// live replica, so a read sees the writes before it (insert_quorum would
// too, but on 18.16 it keeps mutations, erasures and purges, from ever
// finishing on the last part written with it). Without the cluster it
// skips, or fails where ClickHouse is required.
func ReplicatedStore(t testing.TB) (*clickhouse.Store, Replicated) {
	t.Helper()
	r := Replicated{Cluster: os.Getenv("CLICKHOUSE_TEST_REPLICATED_CLUSTER"), Database: Database(t)}
	urls := []string{os.Getenv("CLICKHOUSE_TEST_REPLICATED_URL"), os.Getenv("CLICKHOUSE_TEST_REPLICA2_URL")}
	if r.Cluster == "" || urls[0] == "" || urls[1] == "" {
		if required() {
			t.Fatal("the replicated ClickHouse test cluster is unset and ClickHouse is required: run .ci/clickhouse-cluster.sh start-replicated")
		}
		t.Skip("CLICKHOUSE_TEST_REPLICATED_* unset (.ci/clickhouse-cluster.sh start-replicated prints them)")
	}
	for _, u := range urls {
		r.Replicas = append(r.Replicas, withDatabase(t, u, r.Database))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The schema to replicate: expd's, migrated on one replica in a
	// scratch database, less the columns of the later migration (0002),
	// so that Migrate's ALTERs run on replicated tables below.
	scratch := Database(t)
	open(t, withDatabase(t, urls[0], scratch), "")
	conn := Conn(t, urls[0])
	if err := conn.Exec(ctx, "ALTER TABLE "+scratch+".events_local DROP COLUMN provider, DROP COLUMN finish_reasons"); err != nil {
		t.Fatal(err)
	}
	if err := conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s ON CLUSTER %s", r.Database, r.Cluster)); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, "SELECT name, create_table_query FROM system.tables WHERE database = ? AND engine LIKE '%MergeTree'", scratch)
	if err != nil {
		t.Fatal(err)
	}
	var ddl []string
	for rows.Next() {
		var name, create string
		if err := rows.Scan(&name, &create); err != nil {
			t.Fatal(err)
		}
		ddl = append(ddl, replicatedForm(create, scratch, r.Database, name, r.Cluster))
	}
	if err := rows.Err(); err != nil || len(ddl) == 0 {
		t.Fatalf("read the scratch schema: %d tables, %v", len(ddl), err)
	}
	for _, st := range ddl {
		if err := conn.Exec(ctx, st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	return open(t, r.Replicas[0], r.Cluster), r
}

// mergeTreeEngine matches a MergeTree family engine and its arguments in
// a create_table_query.
var mergeTreeEngine = regexp.MustCompile(`ENGINE = (\w*)MergeTree(\(([^)]*)\))?`)

// replicatedForm rewrites the CREATE TABLE of table in database from into
// its replicated form in database to, ON CLUSTER cluster: the engine's
// Replicated twin with a ZooKeeper path per shard and table and the
// {replica} macro, the same columns, partitioning and order.
func replicatedForm(create, from, to, table, cluster string) string {
	create = strings.Replace(create, "CREATE TABLE "+from+"."+table+" ", fmt.Sprintf("CREATE TABLE %s.%s ON CLUSTER %s ", to, table, cluster), 1)
	return mergeTreeEngine.ReplaceAllStringFunc(create, func(engine string) string {
		m := mergeTreeEngine.FindStringSubmatch(engine)
		args := fmt.Sprintf("'/clickhouse/tables/{shard}/%s/%s', '{replica}'", to, table)
		if m[3] != "" {
			args += ", " + m[3]
		}
		return fmt.Sprintf("ENGINE = Replicated%sMergeTree(%s)", m[1], args)
	})
}

// Conn is a plain connection to the node of dsn, closed at cleanup, for
// what a test checks on one node.
func Conn(t testing.TB, dsn string) driver.Conn {
	t.Helper()
	opts, err := ch.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ch.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func withDatabase(t testing.TB, dsn, database string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("clickhouse dsn %q: %v", dsn, err)
	}
	u.Path = "/" + database
	return u.String()
}
