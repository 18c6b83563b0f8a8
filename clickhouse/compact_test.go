package clickhouse_test

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/clickhouse"
	"github.com/expd/expd/clickhouse/clickhousetest"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results/enginetest"
	"github.com/expd/expd/vocab"
)

// On the cluster with the raced copies' days compacted, the runs read
// those days without FINAL (the SQL built has none), and the conformance
// suite still finds each event counted once: a compacted day holds no
// copies. Before the compaction the same days are read with FINAL.
func TestConformanceClusterCompacted(t *testing.T) {
	s := clickhousetest.Store(t, true)
	enginetest.Run(t, testenv.DB(t), func(*testing.T) enginetest.Engine {
		return enginetest.Engine{Events: s, Aggregator: s, Race: func(t *testing.T, rows []ingest.EventRow) {
			race(s)(t, rows)
			if finals := finalReads(t, s, rows); finals == 0 {
				t.Fatal("the raced copies' days are read without FINAL before compaction")
			}
			merged, err := s.CompactDays(t.Context(), time.Now().Add(48*time.Hour), nil)
			if err != nil || merged == 0 {
				t.Fatalf("CompactDays = %d, %v; want days merged", merged, err)
			}
			if finals := finalReads(t, s, rows); finals != 0 {
				t.Fatalf("%d days still read with FINAL after compaction", finals)
			}
			if again, err := s.CompactDays(t.Context(), time.Now().Add(48*time.Hour), nil); err != nil || again != 0 {
				t.Fatalf("CompactDays again = %d, %v; want nothing left to merge", again, err)
			}
		}}
	})
}

// finalReads counts the FINAL reads of days holding some of rows in
// every shard's SQL for the org's events over the rows' span (a day
// without events is read with FINAL: it costs nothing).
func finalReads(t *testing.T, s *clickhouse.Store, rows []ingest.EventRow) int {
	t.Helper()
	from := slices.MinFunc(rows, func(a, b ingest.EventRow) int { return a.Ts.Compare(b.Ts) }).Ts
	to := slices.MaxFunc(rows, func(a, b ingest.EventRow) int { return a.Ts.Compare(b.Ts) }).Ts.Add(time.Microsecond)
	reads, err := s.EventReads(t.Context(), rows[0].OrgID, from, to)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, sql := range reads {
		for _, m := range finalDay.FindAllStringSubmatch(sql, -1) {
			lo, _ := strconv.ParseInt(m[1], 10, 64)
			hi, _ := strconv.ParseInt(m[2], 10, 64)
			if slices.ContainsFunc(rows, func(r ingest.EventRow) bool { return r.Ts.UnixMicro() >= lo && r.Ts.UnixMicro() < hi }) {
				n++
			}
		}
	}
	return n
}

// finalDay is a day's FINAL read in localEvents' SQL: its ts bounds.
var finalDay = regexp.MustCompile(`FINAL WHERE .*? ts >= (\d+) AND ts < (\d+)`)

// CompactDays leaves today (not ended) as it is, and a read without
// FINAL whose day gets a part during it runs again with FINAL; one whose
// day is unchanged runs once.
func TestACompactedDayChangedDuringAReadIsReadAgainWithFinal(t *testing.T) {
	s := clickhousetest.Store(t, false)
	ctx := t.Context()
	org := "org-compact-" + strings.ReplaceAll(t.Name(), "/", "-")
	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -2)
	event := func(id string, at time.Time) ingest.EventRow {
		return ingest.EventRow{OrgID: org, EventID: id, Type: vocab.TypeExposure, ExperimentID: "exp", UserID: "u-" + id,
			Variant: "a", Ts: at, ReceivedAt: at, Source: ingest.SourceAPI}
	}
	today := time.Now().UTC().Add(-time.Second)
	for i, at := range []time.Time{day.Add(time.Hour), day.Add(2 * time.Hour), today, today} {
		if _, err := s.Insert(ctx, []ingest.EventRow{event(string(rune('a'+i)), at)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CompactDays(ctx, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	if reads, err := s.EventReads(ctx, org, today, today.Add(time.Second)); err != nil || !strings.Contains(reads[0], " FINAL ") {
		t.Fatalf("today (two parts, not ended) is read %q, %v; want FINAL", reads, err)
	}
	var calls []bool
	if err := s.DedupedRead(ctx, day, func(plain bool) error { calls = append(calls, plain); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || !calls[0] {
		t.Fatalf("reads of an unchanged compacted day: %v; want one without FINAL", calls)
	}
	calls = nil
	err := s.DedupedRead(ctx, day, func(plain bool) error {
		calls = append(calls, plain)
		if len(calls) == 1 { // a raced copy arrives during the read
			return s.WriteRaced(ctx, []ingest.EventRow{event("a", day.Add(time.Hour))})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || !calls[0] || calls[1] {
		t.Fatalf("reads of a compacted day that got a part during the read: %v; want without FINAL, then with", calls)
	}
}
