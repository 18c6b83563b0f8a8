package clickhouse_test

import (
	"testing"

	"github.com/expd/expd/clickhouse"
	"github.com/expd/expd/clickhouse/clickhousetest"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/enginetest"
)

// ClickHouse on one node passes the conformance suite every analytics
// engine must pass, beside the control plane on SQLite or (DATABASE_URL)
// PostgreSQL.
func TestConformanceOneNode(t *testing.T) {
	s := clickhousetest.Store(t, false)
	enginetest.Run(t, testenv.DB(t), func(*testing.T) enginetest.Engine {
		return enginetest.Engine{Events: s, Aggregator: s, Race: race(s)}
	})
}

// ClickHouse sharded over the two-shard test cluster passes it too, and
// the fixture's users land on both shards.
func TestConformanceCluster(t *testing.T) {
	s := clickhousetest.Store(t, true)
	if s.Shards() < 2 {
		t.Fatalf("the test cluster has %d shards; want 2 or more", s.Shards())
	}
	enginetest.Run(t, testenv.DB(t), func(*testing.T) enginetest.Engine {
		return enginetest.Engine{Events: s, Aggregator: s, Race: race(s)}
	})
}

// race stores raced copies of rows in s (enginetest.Engine.Race).
func race(s *clickhouse.Store) func(t *testing.T, rows []ingest.EventRow) {
	return func(t *testing.T, rows []ingest.EventRow) {
		if err := s.WriteRaced(t.Context(), rows); err != nil {
			t.Fatalf("store raced copies: %v", err)
		}
	}
}
