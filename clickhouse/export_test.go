package clickhouse

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/expd/expd/ingest"
)

// WriteRaced stores rows without the claim probe, as two writes of the
// same ids in flight at once do (docs/scale.md, "Dedup"): copies beside
// the stored events, which every read must count once.
func (s *Store) WriteRaced(ctx context.Context, rows []ingest.EventRow) error {
	return s.write(ctx, rows)
}

// EventReads is the SQL of every shard's reads of the org's events in
// [from, to) as a run builds it now (localEvents over the shard's parts).
func (s *Store) EventReads(ctx context.Context, orgID string, from, to time.Time) ([]string, error) {
	out := make([]string, len(s.shards))
	for i, c := range s.shards {
		parts, err := s.listDayParts(ctx, c)
		if err != nil {
			return nil, err
		}
		out[i] = s.localEvents([]string{"user_id"}, orgID, "1", micros(from), micros(to), parts)
	}
	return out, nil
}

// DedupedRead runs read as a run's reads run (dedupedRead), telling it
// whether the first shard reads day without FINAL.
func (s *Store) DedupedRead(ctx context.Context, day time.Time, read func(plain bool) error) error {
	d := floorDiv(micros(day), dayMicros)
	return s.dedupedRead(ctx, func(views []dayParts) error { return read(views[0].plain(d)) })
}

// MigrateTo applies the migrations up to version alone: the schema as an
// older build left it, for a test of the migrations after it.
func (s *Store) MigrateTo(ctx context.Context, version int) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return s.migrate(ctx, slices.DeleteFunc(ms, func(m migration) bool { return m.version > version }))
}

// InsertedIDs counts the org's event rows by id over the shards' local
// tables, without FINAL: a row inserted twice counts twice.
func (s *Store) InsertedIDs(ctx context.Context, orgID string) (map[string]int, error) {
	out := map[string]int{}
	for i := range s.shards {
		if err := s.insertedOn(ctx, i, orgID, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// PackedFloats runs packedFloats over the array literal of xs on the
// first shard and decodes the answer as a run's rows do.
func (s *Store) PackedFloats(ctx context.Context, xs []float64) ([]float64, error) {
	lits := make([]string, len(xs))
	for i, x := range xs {
		lits[i] = fmt.Sprintf("reinterpretAsFloat64(unhex('%016x'))", bits.ReverseBytes64(math.Float64bits(x)))
	}
	var p packedCalls
	arr := "CAST([] AS Array(Float64))"
	if len(xs) > 0 {
		arr = "[" + strings.Join(lits, ", ") + "]"
	}
	err := s.shards[0].QueryRow(ctx, "SELECT "+packedFloats(arr)).Scan(&p)
	return p, err
}

// InsertedIDsOn is InsertedIDs of shard i alone (the others may be down).
func (s *Store) InsertedIDsOn(ctx context.Context, i int, orgID string) (map[string]int, error) {
	out := map[string]int{}
	return out, s.insertedOn(ctx, i, orgID, out)
}

func (s *Store) insertedOn(ctx context.Context, i int, orgID string, out map[string]int) error {
	rows, err := s.shards[i].Query(ctx, "SELECT event_id, count() FROM "+s.t(eventsLocal)+" WHERE org_id = ? GROUP BY event_id", orgID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var n uint64
		if err := rows.Scan(&id, &n); err != nil {
			return err
		}
		out[id] += int(n)
	}
	return rows.Err()
}

// SelectQueries sums the SELECT queries every node has run since it
// started (system.events): what a test counts a write's probes by. The
// read is a SELECT itself, counted on each node.
func (s *Store) SelectQueries(ctx context.Context) (uint64, error) {
	var sum uint64
	for i, c := range s.nodes {
		var n uint64
		if err := c.QueryRow(ctx, "SELECT value FROM system.events WHERE event = 'SelectQuery'").Scan(&n); err != nil {
			return 0, fmt.Errorf("node %d: %w", i+1, err)
		}
		sum += n
	}
	return sum, nil
}
