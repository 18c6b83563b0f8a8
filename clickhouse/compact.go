package clickhouse

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Reading a day without FINAL. Copies of an event (a write raced past
// the claim probe, or the retry of a write whose claims failed) are in
// different parts of the same day: one insert holds each id once (the
// probe keeps a key's first row) and a merge collapses the copies it
// meets. So a day that is one active part on a shard holds no copies
// there, and is read as it is; FINAL, which 18.16 runs as one merge
// stream per day, is kept for the days with several parts (today's, and
// any day written since the last compaction). CompactDays makes the
// ended days one part each, nightly.

// dayParts is a shard's active parts of events_local, by day number.
type dayParts map[int64][]string

// listDayParts lists the active parts of events_local on one shard.
func (s *Store) listDayParts(ctx context.Context, c driver.Conn) (dayParts, error) {
	return s.listParts(ctx, c, eventsLocal)
}

// listParts lists the active parts of table on one node, by partition
// (the tables of the schema are partitioned by a number: a day's, or
// 30 days' for the claims).
func (s *Store) listParts(ctx context.Context, c driver.Conn, table string) (map[int64][]string, error) {
	rows, err := c.Query(ctx, "SELECT partition, groupArray(name) FROM system.parts WHERE database = ? AND table = ? AND active GROUP BY partition", s.database, table)
	if err != nil {
		return nil, fmt.Errorf("list parts of %s: %w", table, err)
	}
	defer rows.Close()
	out := map[int64][]string{}
	for rows.Next() {
		var p string
		var names []string
		if err := rows.Scan(&p, &names); err != nil {
			return nil, fmt.Errorf("list parts of %s: %w", table, err)
		}
		d, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("partition %q of %s is not a number: %w", p, table, err)
		}
		slices.Sort(names)
		out[d] = names
	}
	return out, rows.Err()
}

// plain tells whether day d is read without FINAL: it is one part. A day
// with no part is read with FINAL (it costs nothing), so that a part
// arriving there during the read needs no check.
func (p dayParts) plain(d int64) bool { return p != nil && len(p[d]) == 1 }

// shardParts lists every shard's parts of the days ended by now (nil
// where a shard's list failed: that shard's reads keep FINAL; the
// failure is logged, not returned, as the reads work without it). Today
// is left out, so read with FINAL: it gets parts all day, and one
// arriving during a read would make the read run again.
func (s *Store) shardParts(ctx context.Context) []dayParts {
	today := floorDiv(micros(time.Now()), dayMicros)
	views := make([]dayParts, len(s.shards))
	err := s.onShards(ctx, func(ctx context.Context, i int, c driver.Conn) error {
		v, err := s.listDayParts(ctx, c)
		for d := range v {
			if d >= today {
				delete(v, d)
			}
		}
		views[i] = v
		return err
	})
	if err != nil {
		slog.WarnContext(ctx, "clickhouse: reads keep FINAL on every day", "err", err)
	}
	return views
}

// dedupedRead runs read with the shards' parts listed before it, then
// lists them again: a query reads the parts active when it starts, and a
// part once replaced (merged, mutated, dropped) never comes back, so a
// day that has the same one part before and after the read had that part
// alone during it. If a day read without FINAL changed meanwhile (a part
// arrived there and may hold copies of the part read), read runs again
// with FINAL on every day. read must start afresh on each call.
func (s *Store) dedupedRead(ctx context.Context, read func(views []dayParts) error) error {
	before := s.shardParts(ctx)
	if err := read(before); err != nil {
		return err
	}
	after := s.shardParts(ctx)
	for i, b := range before {
		for d, parts := range b {
			if b.plain(d) && (after[i] == nil || !slices.Equal(parts, after[i][d])) {
				slog.InfoContext(ctx, "clickhouse: a day read without FINAL changed during the read; reading again with FINAL", "shard", i+1, "day", d)
				return read(make([]dayParts, len(s.shards)))
			}
		}
	}
	return nil
}

// CompactDays makes each day that ended at or before end one part on
// every shard (OPTIMIZE TABLE events_local PARTITION <day> FINAL, only
// for days with more than one active part), so the runs read it without
// FINAL. It merges the day's parts into one, reading and writing the
// day's rows once: about as long as one FINAL read of the day, once a
// night instead of in every run that reads it. A day already one part is
// skipped, so a second call (a retried activity) does nothing. It
// returns how many (shard, day) partitions it merged; progress is called
// after each.
func (s *Store) CompactDays(ctx context.Context, end time.Time, progress func(merged int)) (int, error) {
	last := floorDiv(micros(end), dayMicros) // days before this one have ended
	merged := 0
	for i, c := range s.shards {
		parts, err := s.listDayParts(ctx, c)
		if err != nil {
			return merged, fmt.Errorf("compact days of shard %d: %w", i+1, err)
		}
		for d, names := range parts {
			if d >= last || len(names) < 2 {
				continue
			}
			if err := c.Exec(ctx, "OPTIMIZE TABLE "+s.t(eventsLocal)+" PARTITION "+strconv.FormatInt(d, 10)+" FINAL"); err != nil {
				return merged, fmt.Errorf("compact day %s of shard %d: %w", fromMicros(d*dayMicros).Format(time.DateOnly), i+1, err)
			}
			merged++
			if progress != nil {
				progress(merged)
			}
		}
	}
	return merged, nil
}
