package ingest_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/vocab"
)

// partitionedDB is a migrated PostgreSQL schema; SQLite keeps one table,
// so these tests need DATABASE_URL.
func partitionedDB(t *testing.T) *gorm.DB {
	t.Helper()
	if os.Getenv("DATABASE_URL") == "" {
		t.Skip("events are partitioned on PostgreSQL only; set DATABASE_URL")
	}
	return testenv.DB(t)
}

func event(org, id string, ts time.Time) ingest.EventRow {
	return ingest.EventRow{OrgID: org, EventID: id, Type: vocab.TypeExposure, ExperimentID: "00000000-0000-0000-0000-0000000000e1",
		UserID: "u-" + id, Variant: "a", Ts: ts, Source: ingest.SourceAPI}
}

// partitionOf names the table a stored event landed in.
func partitionOf(t *testing.T, db *gorm.DB, org, id string) string {
	t.Helper()
	var names []string
	if err := db.Raw(`SELECT tableoid::regclass::text FROM events WHERE org_id = ? AND event_id = ?`, org, id).Scan(&names).Error; err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 {
		t.Fatalf("event %s stored %d times, want once", id, len(names))
	}
	return names[0]
}

func TestPartitionsExistAheadAndEnsureIsIdempotent(t *testing.T) {
	db := partitionedDB(t)
	ctx := context.Background()
	today := ingest.DayOf(time.Now())
	parts, err := ingest.ListPartitions(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	have := map[time.Time]bool{}
	for _, p := range parts {
		have[p.Day] = true
		if p.Name != "events_p"+p.Day.Format("20060102") {
			t.Errorf("partition %s of day %s", p.Name, p.Day)
		}
	}
	for d := -1; d <= 7; d++ {
		if !have[today.AddDate(0, 0, d)] {
			t.Errorf("no partition for today%+d after migration (have %v)", d, parts)
		}
	}
	created, err := ingest.EnsurePartitions(ctx, db, today, today.AddDate(0, 0, 10))
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 3 || !created[0].Equal(today.AddDate(0, 0, 8)) {
		t.Fatalf("created %v, want days +8..+10", created)
	}
	again, err := ingest.EnsurePartitions(ctx, db, today, today.AddDate(0, 0, 10))
	if err != nil || len(again) != 0 {
		t.Fatalf("second ensure created %v (%v), want none", again, err)
	}
}

func TestLateAndFutureEventsAreRoutedAndDefaultRowsMoveIntoTheirPartition(t *testing.T) {
	db := partitionedDB(t)
	ctx := context.Background()
	org := testenv.NewOrg(t, db, testenv.Signer(t)).ID
	w := ingest.NewWriter(db, ingest.Options{})
	now := time.Now().UTC()
	late, future := now.AddDate(0, 0, -20), now.Add(3*24*time.Hour)
	rows := []ingest.EventRow{event(org, "late", late), event(org, "future", future), event(org, "now", now)}
	if out, err := w.Write(ctx, ingest.Batch{Tenant: ingest.Tenant{OrgID: org, Plan: plans.Enterprise}, Rows: rows}); err != nil || out.Accepted != 3 {
		t.Fatalf("write: %+v %v", out, err)
	}
	if got := partitionOf(t, db, org, "future"); got != "events_p"+future.Format("20060102") {
		t.Errorf("future event in %s", got)
	}
	if got := partitionOf(t, db, org, "now"); got != "events_p"+now.Format("20060102") {
		t.Errorf("current event in %s", got)
	}
	// No partition exists 20 days back: the catch-all holds it ...
	if got := partitionOf(t, db, org, "late"); got != "events_default" {
		t.Fatalf("late event in %s, want events_default", got)
	}
	// ... until maintenance creates its day, moving it in.
	created, err := ingest.EnsurePartitions(ctx, db, now, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 1 || !created[0].Equal(ingest.DayOf(late)) {
		t.Fatalf("created %v, want the late event's day", created)
	}
	if got := partitionOf(t, db, org, "late"); got != "events_p"+late.Format("20060102") {
		t.Errorf("late event after maintenance in %s", got)
	}
	var stored, ids int64
	db.Raw(`SELECT count(*) FROM events WHERE org_id = ?`, org).Scan(&stored)
	db.Raw(`SELECT count(*) FROM event_ids WHERE org_id = ?`, org).Scan(&ids)
	if stored != 3 || ids != 3 {
		t.Fatalf("%d events and %d ids after the move, want 3 and 3", stored, ids)
	}
}

func TestDedupIsExactAcrossPartitions(t *testing.T) {
	db := partitionedDB(t)
	ctx := context.Background()
	org := testenv.NewOrg(t, db, testenv.Signer(t)).ID
	other := testenv.NewOrg(t, db, testenv.Signer(t)).ID
	w := ingest.NewWriter(db, ingest.Options{})
	write := func(org string, rows ...ingest.EventRow) ingest.Outcome {
		t.Helper()
		out, err := w.Write(ctx, ingest.Batch{Tenant: ingest.Tenant{OrgID: org, Plan: plans.Enterprise}, Rows: rows})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	now := time.Now().UTC()
	first := event(org, "e1", now)
	if out := write(org, first); out.Accepted != 1 {
		t.Fatalf("first write %+v", out)
	}
	// A retry or a spill replay keeps the timestamp; a client reusing the
	// id with another day's timestamp would go to another partition: both
	// are duplicates of the stored event.
	if out := write(org, first); out.Accepted != 0 || out.Duplicates != 1 {
		t.Errorf("retry %+v, want a duplicate", out)
	}
	if out := write(org, event(org, "e1", now.Add(-23*time.Hour))); out.Accepted != 0 || out.Duplicates != 1 {
		t.Errorf("same id on the previous day %+v, want a duplicate", out)
	}
	if out := write(org, event(org, "e1", now.Add(48*time.Hour))); out.Accepted != 0 || out.Duplicates != 1 {
		t.Errorf("same id two days ahead %+v, want a duplicate", out)
	}
	// Another org may use the same id.
	if out := write(other, event(other, "e1", now.Add(-time.Hour))); out.Accepted != 1 {
		t.Errorf("other org %+v, want stored", out)
	}
	// Concurrent copies of one batch, spread over three days, store once.
	var batch []ingest.EventRow
	for i := range 300 {
		batch = append(batch, event(org, fmt.Sprintf("c%03d", i), now.Add(-time.Duration(i%3)*20*time.Hour)))
	}
	done := make(chan ingest.Outcome, 3)
	for range 3 {
		go func() { done <- write(org, batch...) }()
	}
	accepted := 0
	for range 3 {
		accepted += (<-done).Accepted
	}
	var n int64
	db.Raw(`SELECT count(*) FROM events WHERE org_id = ?`, org).Scan(&n)
	if accepted != 300 || n != 301 {
		t.Fatalf("3 concurrent copies: %d accepted, %d rows stored; want 300 and 301", accepted, n)
	}
}

// TestEveryPartitionCarriesThePrePeriodIndex: the CUPED pre-period join
// reads events by (org_id, user_id, ts); migration 0171 had lost that index
// (0186 restores it as a partitioned index), so every partition, including
// one created ahead now and the default, must have its copy.
func TestEveryPartitionCarriesThePrePeriodIndex(t *testing.T) {
	db := partitionedDB(t)
	ctx := context.Background()
	ahead := ingest.DayOf(time.Now()).AddDate(0, 0, 40)
	if _, err := ingest.EnsurePartitions(ctx, db, ahead, ahead); err != nil {
		t.Fatal(err)
	}
	var partitions, indexed int64
	if err := db.Raw(`SELECT count(*) FROM pg_inherits WHERE inhparent = 'events'::regclass`).Scan(&partitions).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Raw(`SELECT count(*) FROM pg_inherits WHERE inhparent = 'events_org_user_ts'::regclass`).Scan(&indexed).Error; err != nil {
		t.Fatal(err)
	}
	var columns string
	if err := db.Raw(`SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'events_org_user_ts'`).Scan(&columns).Error; err != nil {
		t.Fatal(err)
	}
	if partitions < 2 || indexed != partitions || !strings.Contains(columns, "(org_id, user_id, ts)") {
		t.Fatalf("%d partitions, %d with events_org_user_ts (%q)", partitions, indexed, columns)
	}
}
