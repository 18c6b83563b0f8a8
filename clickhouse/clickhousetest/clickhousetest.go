// Package clickhousetest gives tests a migrated ClickHouse store of
// their own: a fresh database on the server (or every node of the
// cluster) named by the environment, dropped when the test ends.
//
// CLICKHOUSE_TEST_URL is a clickhouse-go DSN of a node; with
// CLICKHOUSE_TEST_CLUSTER, the cluster (a remote_servers name) whose
// shards the sharded store spans (.ci/clickhouse-cluster.sh starts two);
// CLICKHOUSE_TEST_REPLICATED_URL, CLICKHOUSE_TEST_REPLICA2_URL and
// CLICKHOUSE_TEST_REPLICATED_CLUSTER, the replicated form (replicated.go).
// Without them the tests skip, unless CI=true or
// EXPD_REQUIRE_CLICKHOUSE=1, where they fail.
package clickhousetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/expd/expd/clickhouse"
)

// required tells whether a missing ClickHouse fails the test.
func required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("EXPD_REQUIRE_CLICKHOUSE") == "1"
}

// URL is the test server's DSN with database set, or skips (fails when
// required) without one.
func URL(t testing.TB, database string) string {
	t.Helper()
	base := os.Getenv("CLICKHOUSE_TEST_URL")
	if base == "" {
		if required() {
			t.Fatal("CLICKHOUSE_TEST_URL is unset and ClickHouse is required (CI=true or EXPD_REQUIRE_CLICKHOUSE=1): run .ci/clickhouse-cluster.sh start")
		}
		t.Skip("CLICKHOUSE_TEST_URL unset (.ci/clickhouse-cluster.sh start prints it)")
	}
	return withDatabase(t, base, database)
}

// Cluster is the test cluster's name, or skips (fails when required).
func Cluster(t testing.TB) string {
	t.Helper()
	c := os.Getenv("CLICKHOUSE_TEST_CLUSTER")
	if c == "" {
		if required() {
			t.Fatal("CLICKHOUSE_TEST_CLUSTER is unset and ClickHouse is required (CI=true or EXPD_REQUIRE_CLICKHOUSE=1)")
		}
		t.Skip("CLICKHOUSE_TEST_CLUSTER unset (.ci/clickhouse-cluster.sh start prints it)")
	}
	return c
}

// Database is a fresh database name.
func Database(t testing.TB) string {
	b := make([]byte, 6)
	rand.Read(b)
	return "expd_test_" + hex.EncodeToString(b)
}

// Store opens a migrated store in a fresh database, sharded over the test
// cluster when sharded is set, and drops the database on every node when
// the test ends.
func Store(t testing.TB, sharded bool) *clickhouse.Store {
	t.Helper()
	s, _ := StoreWithDSN(t, sharded)
	return s
}

// StoreWithDSN is Store and the DSN of its database, for a process the
// test starts (CLICKHOUSE_URL; CLICKHOUSE_CLUSTER is Cluster).
func StoreWithDSN(t testing.TB, sharded bool) (*clickhouse.Store, string) {
	t.Helper()
	cluster := ""
	if sharded {
		cluster = Cluster(t)
	}
	dsn := URL(t, Database(t))
	return open(t, dsn, cluster), dsn
}

// open opens, migrates and (at cleanup) drops the database of dsn.
func open(t testing.TB, dsn, cluster string) *clickhouse.Store {
	t.Helper()
	s := openUnmigrated(t, dsn, cluster)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// Unmigrated is Store with no migration applied, for a test of the
// migrations themselves.
func Unmigrated(t testing.TB, sharded bool) *clickhouse.Store {
	t.Helper()
	cluster := ""
	if sharded {
		cluster = Cluster(t)
	}
	return openUnmigrated(t, URL(t, Database(t)), cluster)
}

// openUnmigrated opens the store of dsn and drops its database at cleanup.
func openUnmigrated(t testing.TB, dsn, cluster string) *clickhouse.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := clickhouse.Open(ctx, dsn, cluster)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.DropDatabase(ctx); err != nil {
			t.Errorf("drop clickhouse test database: %v", err)
		}
		s.Close()
	})
	return s
}
