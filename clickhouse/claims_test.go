package clickhouse_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/expd/expd/clickhouse/clickhousetest"
)

// The write path's probe of a group's ids reads about a granule of 256
// claims per id, not the org's claims: with the day partitions and
// 8,192-row granules of event_ids_local it read every claim of the org
// (a granule per id and day), a cost that grew with the org's history.
// The ids of 40,000 stored events are random strings like client UUIDs;
// the probe asks for 10 of them and 10 unknown ones, on one part.
func TestClaimProbeReadsAboutAGranulePerID(t *testing.T) {
	s, dsn := clickhousetest.StoreWithDSN(t, false)
	ctx := t.Context()
	at := time.Now().UTC().AddDate(0, 0, -1).Truncate(time.Millisecond)
	const org, stored = "org-probe", 40_000
	rows := exposures(org, "x", stored, at)
	for i := range rows {
		rows[i].EventID = fmt.Sprintf("%016x-%d", uint64(i)*0x9E3779B97F4A7C15, i)
	}
	if n, err := s.Insert(ctx, rows); err != nil || n != stored {
		t.Fatalf("Insert = %d, %v; want %d", n, err, stored)
	}
	if err := clickhousetest.Conn(t, dsn).Exec(ctx, "OPTIMIZE TABLE "+s.Database()+".event_claims_local FINAL"); err != nil {
		t.Fatal(err)
	}
	var ids, want []string
	for i := range 10 {
		ids = append(ids, rows[i*3_999].EventID, fmt.Sprintf("unknown-%d", i))
		want = append(want, rows[i*3_999].EventID)
	}
	var read uint64
	probe := ch.Context(ctx, ch.WithProgress(func(p *ch.Progress) { read += p.Rows }))
	have, err := s.Existing(probe, org, ids)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for id := range have {
		got = append(got, id)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("Existing found %v; want %v", got, want)
	}
	t.Logf("the probe of %d ids read %d of %d claims", len(ids), read, stored)
	// An id's key is in one granule, or two where it is a granule's
	// first; 8,192-row granules would read all 40,000.
	if limit := uint64(len(ids) * 2 * 256); read == 0 || read > limit {
		t.Errorf("the probe of %d ids read %d claims; want 1 to %d", len(ids), read, limit)
	}
}

// The claims' partitions hold 30 days (intDiv(ts, 30 days)): dropping a
// day keeps its claims while another day of their partition has events,
// so its ids are still duplicates, and drops them with the last day of
// the partition, on every shard; then they may be stored again.
func TestDropDayDropsTheClaimsWithTheirLastDay(t *testing.T) {
	s := clickhousetest.Store(t, true)
	ctx := t.Context()
	day := func(n int64) time.Time { return time.Unix(n*86400, 0).UTC() }
	// Days 19980 and 20009 share a partition (666); 20010 is the next's.
	first, last, next := day(19980), day(20009), day(20010)
	const org = "org-drop"
	for i, d := range []time.Time{first, last, next} {
		if n, err := s.Insert(ctx, exposures(org, fmt.Sprintf("d%d", i), 8, d.Add(time.Hour))); err != nil || n != 8 {
			t.Fatalf("Insert day %d = %d, %v", i, n, err)
		}
	}
	claimed := func(prefix string) int {
		t.Helper()
		var ids []string
		for i := range 8 {
			ids = append(ids, fmt.Sprintf("%s-%d", prefix, i))
		}
		have, err := s.Existing(ctx, org, ids)
		if err != nil {
			t.Fatal(err)
		}
		return len(have)
	}
	if n, err := s.DropDay(ctx, first); err != nil || n != 8 {
		t.Fatalf("DropDay(first) = %d, %v; want 8", n, err)
	}
	if a, b := claimed("d0"), claimed("d1"); a != 8 || b != 8 {
		t.Fatalf("claims after dropping the first day: %d and %d; want 8 and 8 (their partition keeps a day)", a, b)
	}
	if n, err := s.DropDay(ctx, last); err != nil || n != 8 {
		t.Fatalf("DropDay(last) = %d, %v; want 8", n, err)
	}
	if a, b, c := claimed("d0"), claimed("d1"), claimed("d2"); a != 0 || b != 0 || c != 8 {
		t.Fatalf("claims after dropping the partition's last day: %d, %d, %d; want 0, 0, 8", a, b, c)
	}
	if n, err := s.DropDay(ctx, last); err != nil || n != 0 {
		t.Errorf("DropDay of a day gone = %d, %v; want 0, nil", n, err)
	}
	if n, err := s.Insert(ctx, exposures(org, "d0", 8, first.Add(time.Hour))); err != nil || n != 8 {
		t.Errorf("Insert of the dropped ids = %d, %v; want all 8 stored again", n, err)
	}
}

// Migration 0004 moves the claims: a database an older build filled
// (claims in event_ids_local, derived by event_ids_mv) has every claim in
// event_claims_local afterwards, the old table and view are gone, and the
// write path's probe finds every stored id on both shards.
func TestMigrationMovesTheClaims(t *testing.T) {
	s := clickhousetest.Unmigrated(t, true)
	ctx := t.Context()
	if err := s.MigrateTo(ctx, 3); err != nil {
		t.Fatal(err)
	}
	const org = "org-move"
	rows := exposures(org, "m", 300, time.Now().UTC().AddDate(0, 0, -3).Truncate(time.Millisecond))
	if err := s.WriteRaced(ctx, rows); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.EventID)
	}
	if have, err := s.Existing(ctx, org, ids); err != nil || len(have) != len(rows) {
		t.Fatalf("claims found after the migration: %d, %v; want %d", len(have), err, len(rows))
	}
	if n, err := s.Insert(ctx, rows); err != nil || n != 0 {
		t.Errorf("Insert of the stored rows after the migration = %d, %v; want 0", n, err)
	}
	for i, c := range shardConns(t, s, clickhousetest.URL(t, s.Database())) {
		var left uint64
		if err := c.QueryRow(ctx, "SELECT count() FROM system.tables WHERE database = ? AND name IN ('event_ids_local', 'event_ids', 'event_ids_mv')", s.Database()).Scan(&left); err != nil || left != 0 {
			t.Errorf("shard %d: %d of the old claims' tables left, %v; want none", i+1, left, err)
		}
	}
	if err := s.Migrate(ctx); err != nil {
		t.Errorf("a second Migrate: %v", err)
	}
}
