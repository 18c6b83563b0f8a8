package clickhouse_test

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/expd/expd/clickhouse"
	"github.com/expd/expd/clickhouse/clickhousetest"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/vocab"
)

// shardConns connects to the first replica of every shard of the store's
// cluster, in shard order, as the DSN's node lists them.
func shardConns(t *testing.T, s *clickhouse.Store, dsn string) []driver.Conn {
	t.Helper()
	node := clickhousetest.Conn(t, dsn)
	rows, err := node.Query(t.Context(), "SELECT host_address, port FROM system.clusters WHERE cluster = ? AND replica_num = 1 ORDER BY shard_num", s.Cluster())
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []driver.Conn
	for rows.Next() {
		var host string
		var port uint16
		if err := rows.Scan(&host, &port); err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		u.Host = host + ":" + strconv.Itoa(int(port))
		out = append(out, clickhousetest.Conn(t, u.String()))
	}
	if err := rows.Err(); err != nil || len(out) < 2 {
		t.Fatalf("the test cluster's shards: %d, %v; want 2 or more", len(out), err)
	}
	return out
}

// where reads, on every shard, the shard index holding each user's rows
// of table (local) in the org, failing if a user's rows are on two.
func where(t *testing.T, shards []driver.Conn, database, table, orgID, idPrefix string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for i, c := range shards {
		rows, err := c.Query(t.Context(), "SELECT DISTINCT user_id FROM "+database+"."+table+" WHERE org_id = ? AND startsWith(event_id, ?)", orgID, idPrefix)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var u string
			if err := rows.Scan(&u); err != nil {
				t.Fatal(err)
			}
			if j, ok := out[u]; ok {
				t.Errorf("%s: user %s on shards %d and %d", table, u, j+1, i+1)
			}
			out[u] = i
		}
		rows.Close()
	}
	return out
}

func exposures(orgID, prefix string, users int, at time.Time) []ingest.EventRow {
	rows := make([]ingest.EventRow, users)
	for i := range rows {
		rows[i] = ingest.EventRow{OrgID: orgID, EventID: fmt.Sprintf("%s-%d", prefix, i), Type: vocab.TypeExposure,
			ExperimentID: "exp-route", UserID: fmt.Sprintf("user-%d", i), Variant: "control", Ts: at, ReceivedAt: at, Source: ingest.SourceAPI}
	}
	return rows
}

// The write path inserts each shard's rows into its local table itself,
// routed in Go; a user's rows must land where the Distributed table puts
// the same (org, user), or a run (per-shard, per-user aggregation) would
// see one user as two. The same users go through both, and the claims
// the view derives sit beside their events.
func TestRoutingMatchesTheDistributedTable(t *testing.T) {
	s, dsn := clickhousetest.StoreWithDSN(t, true)
	shards := shardConns(t, s, dsn)
	ctx := t.Context()
	at := time.Now().UTC().Truncate(time.Millisecond)
	const org, users = "org-route-0f3a", 400

	if n, err := s.Insert(ctx, exposures(org, "api", users, at)); err != nil || n != users {
		t.Fatalf("Insert = %d, %v; want %d", n, err, users)
	}
	node := clickhousetest.Conn(t, dsn)
	b, err := node.PrepareBatch(ch.Context(ctx, ch.WithSettings(ch.Settings{"insert_distributed_sync": 1})),
		"INSERT INTO "+s.Database()+".events (org_id, event_id, type, experiment_id, user_id, variant, ts, received_at, source)")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range exposures(org, "dist", users, at) {
		if err := b.Append(r.OrgID, r.EventID, string(r.Type), r.ExperimentID, r.UserID, r.Variant, r.Ts.UnixMicro(), r.ReceivedAt.UnixMicro(), r.Source); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}

	mine, theirs := where(t, shards, s.Database(), "events_local", org, "api-"), where(t, shards, s.Database(), "events_local", org, "dist-")
	claims := where(t, shards, s.Database(), "event_claims_local", org, "api-")
	if len(mine) != users || len(theirs) != users || len(claims) != users {
		t.Fatalf("users found: %d written by the store, %d through the Distributed table, %d claims; want %d each", len(mine), len(theirs), len(claims), users)
	}
	perShard := make([]int, len(shards))
	for u, i := range mine {
		if theirs[u] != i || claims[u] != i {
			t.Errorf("user %s: the store wrote shard %d, the Distributed table shard %d, the claim is on shard %d", u, i+1, theirs[u]+1, claims[u]+1)
		}
		perShard[i]++
	}
	for i, n := range perShard {
		if n == 0 {
			t.Errorf("no user on shard %d of %v: the test proves nothing", i+1, perShard)
		}
	}
}

// The view of migration 0003 derives the claims: an insert is one per
// shard, every stored event has its claim (Existing finds it, a second
// Insert stores nothing), and the claim carries the event's columns.
func TestClaimsAreDerivedFromTheEvents(t *testing.T) {
	for _, sharded := range []bool{false, true} {
		t.Run(fmt.Sprintf("sharded=%v", sharded), func(t *testing.T) {
			s := clickhousetest.Store(t, sharded)
			ctx := t.Context()
			at := time.Now().UTC().Add(-time.Hour).Truncate(time.Microsecond)
			rows := exposures("org-claims", "c", 50, at)
			if n, err := s.Insert(ctx, rows); err != nil || n != 50 {
				t.Fatalf("Insert = %d, %v", n, err)
			}
			ids := make([]string, len(rows))
			for i := range rows {
				ids[i] = rows[i].EventID
			}
			have, err := s.Existing(ctx, "org-claims", ids)
			if err != nil || len(have) != 50 {
				t.Fatalf("Existing = %d ids, %v; want 50", len(have), err)
			}
			if n, err := s.Insert(ctx, rows); err != nil || n != 0 {
				t.Fatalf("Insert again = %d, %v; want 0", n, err)
			}
			call, ok, err := s.ReadCall(ctx, "org-claims", "c-7")
			if err != nil || ok {
				t.Fatalf("ReadCall of an exposure = %v, %v, %v; want not found", call, ok, err)
			}
		})
	}
}

// A write that fails half way: one shard refuses (its events table is
// gone), the other stores its rows. The caller's retry stores the rest,
// each event once with its claim; the rows stored by the first attempt
// are duplicates.
func TestAHalfFailedWriteIsFinishedByTheRetry(t *testing.T) {
	s, dsn := clickhousetest.StoreWithDSN(t, true)
	shards := shardConns(t, s, dsn)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	at := time.Now().UTC().Truncate(time.Millisecond)
	const org, users = "org-half", 60
	rows := exposures(org, "h", users, at)
	events := s.Database() + ".events_local"
	if err := shards[1].Exec(ctx, "RENAME TABLE "+events+" TO "+events+"_away"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Insert(ctx, rows); err == nil {
		t.Fatal("Insert with shard 2's events table gone succeeded")
	}
	first := where(t, shards[:1], s.Database(), "events_local", org, "h-")
	if len(first) == 0 || len(first) == users {
		t.Fatalf("shard 1 holds %d of %d users after the failed write; want some, not all", len(first), users)
	}
	if err := shards[1].Exec(ctx, "RENAME TABLE "+events+"_away TO "+events); err != nil {
		t.Fatal(err)
	}
	n, err := s.Insert(ctx, rows)
	if err != nil || n != users-len(first) {
		t.Fatalf("the retry = %d, %v; want %d (those of shard 2)", n, err, users-len(first))
	}
	stored, err := s.StoredIDs(ctx, org)
	if err != nil || len(stored) != users {
		t.Fatalf("stored ids %d, %v; want %d", len(stored), err, users)
	}
	for id, c := range stored {
		if c != 1 {
			t.Errorf("event %s stored %d times", id, c)
		}
	}
	if claims := where(t, shards, s.Database(), "event_claims_local", org, "h-"); len(claims) != users {
		t.Errorf("%d users' claims; want %d", len(claims), users)
	}
}

// The view writes the claims after the events' part: when it fails, the
// events are stored and their claims are not, the state the write path's
// reconciliation expects (docs/scale.md, "Write path"), and the retry
// stores every event once with its claim. The failure is a second view
// on the events that refuses one event id.
func TestEventsAreStoredBeforeTheirClaims(t *testing.T) {
	s, dsn := clickhousetest.StoreWithDSN(t, false)
	ctx := t.Context()
	node := clickhousetest.Conn(t, dsn)
	db := s.Database()
	for _, st := range []string{
		"CREATE TABLE " + db + ".refused (event_id String) ENGINE = Memory",
		// Named to sort before event_claims_mv: 18.16 runs a table's views in name order.
		"CREATE MATERIALIZED VIEW " + db + ".a_refuse TO " + db + ".refused AS SELECT event_id FROM " + db + ".events_local WHERE throwIf(event_id = 'poison') = 0",
	} {
		if err := node.Exec(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Now().UTC().Truncate(time.Millisecond)
	rows := exposures("org-order", "o", 5, at)
	rows[3].EventID = "poison"
	if _, err := s.Insert(ctx, rows); err == nil {
		t.Fatal("Insert through a refusing view succeeded")
	}
	stored, err := s.StoredIDs(ctx, "org-order")
	if err != nil || len(stored) != 5 {
		t.Fatalf("events stored by the failed insert: %d, %v; want all 5 (the events' part is written first)", len(stored), err)
	}
	ids := []string{"o-0", "o-1", "o-2", "poison", "o-4"}
	have, err := s.Existing(ctx, "org-order", ids)
	if err != nil || len(have) == 5 {
		t.Fatalf("claims after the failed view: %d, %v; want fewer than 5", len(have), err)
	}
	if err := node.Exec(ctx, "DROP TABLE "+db+".a_refuse"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Insert(ctx, rows); err != nil || n != 5-len(have) {
		t.Fatalf("the retry = %d, %v; want %d", n, err, 5-len(have))
	}
	if have, err := s.Existing(ctx, "org-order", ids); err != nil || len(have) != 5 {
		t.Errorf("claims after the retry: %d, %v; want 5", len(have), err)
	}
	stored, err = s.StoredIDs(ctx, "org-order")
	if err != nil || len(stored) != 5 {
		t.Fatalf("stored ids after the retry: %d, %v; want 5", len(stored), err)
	}
	for id, c := range stored {
		if c != 1 {
			t.Errorf("event %s read %d times", id, c)
		}
	}
}
