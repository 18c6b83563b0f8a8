package clickhouse_test

import (
	"testing"

	"github.com/expd/expd/clickhouse/clickhousetest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/enginetest"
)

// The documented replicated form (docs/scale.md, "Replication"): tables an
// operator created as Replicated*MergeTree ON CLUSTER through ZooKeeper,
// then `expd migrate` (which keeps them and adds the later migration's
// columns on every replica), pass the conformance suite over a shard of
// two replicas; every replica holds every row, and erasures and purges
// (mutations run on every node) leave both replicas equal.
func TestConformanceReplicated(t *testing.T) {
	s, r := clickhousetest.ReplicatedStore(t)
	enginetest.Run(t, testenv.DB(t), func(*testing.T) enginetest.Engine {
		return enginetest.Engine{Events: s, Aggregator: s, Race: race(s)}
	})
	ctx := t.Context()
	var counts []uint64
	for i, dsn := range r.Replicas {
		c := clickhousetest.Conn(t, dsn)
		for _, table := range []string{"events_local", "event_claims_local", "scores_local"} {
			var engine string
			if err := c.QueryRow(ctx, "SELECT engine FROM system.tables WHERE database = ? AND name = ?", r.Database, table).Scan(&engine); err != nil || engine[:10] != "Replicated" {
				t.Errorf("replica %d: %s engine %q, %v; want Replicated…", i, table, engine, err)
			}
			if err := c.Exec(ctx, "SYSTEM SYNC REPLICA "+r.Database+"."+table); err != nil {
				t.Fatal(err)
			}
		}
		var cols uint64
		if err := c.QueryRow(ctx, "SELECT count() FROM system.columns WHERE database = ? AND table = 'events_local' AND name IN ('provider', 'finish_reasons')", r.Database).Scan(&cols); err != nil || cols != 2 {
			t.Errorf("replica %d: %d of the later migration's columns, %v; want 2", i, cols, err)
		}
		var views uint64
		if err := c.QueryRow(ctx, "SELECT count() FROM system.tables WHERE database = ? AND name = 'event_claims_mv'", r.Database).Scan(&views); err != nil || views != 1 {
			t.Errorf("replica %d: %d claims views, %v; want 1 (Migrate makes it on every replica)", i, views, err)
		}
		var n, claims uint64
		if err := c.QueryRow(ctx, "SELECT count() FROM "+r.Database+".events_local FINAL").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRow(ctx, "SELECT count() FROM "+r.Database+".event_claims_local FINAL").Scan(&claims); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, n, claims)
	}
	if counts[0] == 0 || counts[1] == 0 || counts[0] != counts[2] || counts[1] != counts[3] {
		t.Errorf("events and claims per replica %v; want the same, nonzero, on both", counts)
	}
}
