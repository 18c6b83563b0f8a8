package clickhouse

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/expd/expd/ingest"
)

// PurgeBefore is EventStore.PurgeBefore for one org's retention. Days
// are partitions, but every org shares them, so one org's expiry is a
// mutation (ALTER TABLE ... DELETE) on every node: it rewrites the parts
// holding the org's old rows, once, whatever limit is. It deletes the
// org's events before cutoff and their claims, and returns how many
// events that was (so a caller's loop ends at its next call, which
// finds none). Whole days no org keeps are dropped by DropDay.
func (s *Store) PurgeBefore(ctx context.Context, orgID string, cutoff time.Time, limit int) (int64, error) {
	n, err := s.deleteWhere(ctx, "org_id = ? AND ts < ?", orgID, micros(cutoff))
	if err != nil {
		return 0, fmt.Errorf("purge events of org %s before %s: %w", orgID, cutoff.Format(time.RFC3339), err)
	}
	return n, nil
}

// DeleteUser is EventStore.DeleteUser: a mutation on every node deleting
// the user's events and their claims, waited for, so nothing of the user
// reads afterwards.
func (s *Store) DeleteUser(ctx context.Context, orgID, userID string) (int64, error) {
	n, err := s.deleteWhere(ctx, "org_id = ? AND user_id = ?", orgID, userID)
	if err != nil {
		return 0, fmt.Errorf("delete events of a user of org %s: %w", orgID, err)
	}
	return n, nil
}

// maxIDsPerDelete bounds the ids of one mutation's IN list (a mutation
// takes no external table).
const maxIDsPerDelete = 10_000

// DeleteScores is EventStore.DeleteScores: a mutation on every node
// deleting the org's scores of the calls, waited for.
func (s *Store) DeleteScores(ctx context.Context, orgID string, callIDs []string) (int64, error) {
	var total int64
	for chunk := range slices.Chunk(callIDs, maxIDsPerDelete) {
		n, err := s.deleteScoresWhere(ctx, "org_id = ? AND call_id IN "+quoteList(chunk), orgID)
		if err != nil {
			return total, fmt.Errorf("delete scores of %d calls: %w", len(chunk), err)
		}
		total += n
	}
	return total, nil
}

// PurgeScoresBefore is EventStore.PurgeScoresBefore: a mutation on every
// node, waited for.
func (s *Store) PurgeScoresBefore(ctx context.Context, orgID string, cutoff time.Time) (int64, error) {
	n, err := s.deleteScoresWhere(ctx, "org_id = ? AND ts < ?", orgID, micros(cutoff))
	if err != nil {
		return 0, fmt.Errorf("purge scores of org %s: %w", orgID, err)
	}
	return n, nil
}

// deleteScoresWhere counts the scores matching where (one per key),
// deletes them on every node and waits for the mutations.
func (s *Store) deleteScoresWhere(ctx context.Context, where string, args ...any) (int64, error) {
	var n uint64
	if err := s.conn.QueryRow(ctx, "SELECT count() FROM "+s.t(s.scores)+" FINAL WHERE "+where, args...).Scan(&n); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	for _, node := range s.nodes {
		if err := node.Exec(ctx, "ALTER TABLE "+s.t(scoresLocal)+" DELETE WHERE "+where, args...); err != nil {
			return 0, fmt.Errorf("delete from scores_local: %w", err)
		}
	}
	for _, node := range s.nodes {
		if err := s.awaitMutations(ctx, node); err != nil {
			return 0, err
		}
	}
	return int64(n), nil
}

// deleteWhere counts the events matching where (each id once), deletes
// them and their claims on every node and waits for the mutations.
func (s *Store) deleteWhere(ctx context.Context, where string, args ...any) (int64, error) {
	var n uint64
	if err := s.conn.QueryRow(ctx, "SELECT uniqExact(event_id) FROM "+s.t(s.events)+" WHERE "+where, args...).Scan(&n); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	for _, node := range s.nodes {
		for _, table := range []string{eventsLocal, claimsLocal} {
			if err := node.Exec(ctx, "ALTER TABLE "+s.t(table)+" DELETE WHERE "+where, args...); err != nil {
				return 0, fmt.Errorf("delete from %s: %w", table, err)
			}
		}
	}
	for _, node := range s.nodes {
		if err := s.awaitMutations(ctx, node); err != nil {
			return 0, err
		}
	}
	return int64(n), nil
}

// awaitMutations waits until node has no unfinished mutation in the
// store's database (18.16 has no mutations_sync setting).
func (s *Store) awaitMutations(ctx context.Context, node driver.Conn) error {
	for {
		var left uint64
		if err := node.QueryRow(ctx, "SELECT count() FROM system.mutations WHERE database = ? AND is_done = 0", s.database).Scan(&left); err != nil {
			return fmt.Errorf("await deletes: %w", err)
		}
		if left == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("await deletes: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// dayMicros is one UTC day in the stores' timestamps (Int64 microseconds):
// the partition of an event is intDiv(ts, dayMicros), its day number.
const dayMicros = int64(24 * time.Hour / time.Microsecond)

// Days is ingest.DayPartitions.Days: the UTC days with events on any
// shard (the active parts' partitions of events_local), oldest first.
func (s *Store) Days(ctx context.Context) ([]time.Time, error) {
	seen := map[int64]bool{}
	for i, c := range s.shards {
		parts, err := s.listDayParts(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("list days of shard %d: %w", i+1, err)
		}
		for d := range parts {
			seen[d] = true
		}
	}
	days := slices.Sorted(maps.Keys(seen))
	out := make([]time.Time, len(days))
	for i, d := range days {
		out[i] = time.UnixMicro(d * dayMicros).UTC()
	}
	return out, nil
}

// DayOrgs is ingest.DayPartitions.DayOrgs: the orgs with events on day
// (its partition alone is read: the condition is on the partition key).
func (s *Store) DayOrgs(ctx context.Context, day time.Time) ([]string, error) {
	from := micros(ingest.DayOf(day))
	rows, err := s.conn.Query(ctx, "SELECT DISTINCT org_id FROM "+s.t(s.events)+" WHERE ts >= ? AND ts < ? ORDER BY org_id", from, from+dayMicros)
	if err != nil {
		return nil, fmt.Errorf("orgs of day %s: %w", day.Format(time.DateOnly), err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			return nil, fmt.Errorf("orgs of day %s: %w", day.Format(time.DateOnly), err)
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// DropDay is ingest.DayPartitions.DropDay: the day's partition of events
// goes on every node (ALTER TABLE ... DROP PARTITION: its parts'
// directories are removed, no row is rewritten), then the claims'
// partitions of 30 days (claimDays) none of whose days has events left,
// and it returns how many events (each id once) went with the day.
// Dropping a day already gone does nothing, so a retry finishes an
// interrupted drop.
func (s *Store) DropDay(ctx context.Context, day time.Time) (int64, error) {
	from := micros(ingest.DayOf(day))
	var n uint64
	if err := s.conn.QueryRow(ctx, "SELECT uniqExact(event_id) FROM "+s.t(s.events)+" WHERE ts >= ? AND ts < ?", from, from+dayMicros).Scan(&n); err != nil {
		return 0, fmt.Errorf("count events of day %s: %w", day.Format(time.DateOnly), err)
	}
	for _, node := range s.nodes {
		if err := node.Exec(ctx, "ALTER TABLE "+s.t(eventsLocal)+" DROP PARTITION "+strconv.FormatInt(from/dayMicros, 10)); err != nil {
			return 0, fmt.Errorf("drop day %s: %w", day.Format(time.DateOnly), err)
		}
	}
	if err := s.dropEmptyClaimPartitions(ctx); err != nil {
		return 0, fmt.Errorf("drop day %s: %w", day.Format(time.DateOnly), err)
	}
	return int64(n), nil
}

// claimDays is the days of a partition of the claims (their partition
// key is intDiv(ts, claimDays*dayMicros): 0004_event_claims.sql).
const claimDays = 30

// dropEmptyClaimPartitions drops, on every node, the claims' partitions
// that hold no day with events left on any shard: the claims of dropped
// days go once their whole partition's days are gone.
func (s *Store) dropEmptyClaimPartitions(ctx context.Context) error {
	days, err := s.Days(ctx)
	if err != nil {
		return err
	}
	kept := map[int64]bool{}
	for _, d := range days {
		kept[micros(d)/dayMicros/claimDays] = true
	}
	for i, node := range s.nodes {
		parts, err := s.listParts(ctx, node, claimsLocal)
		if err != nil {
			return fmt.Errorf("node %d: %w", i+1, err)
		}
		for p := range parts {
			if kept[p] {
				continue
			}
			if err := node.Exec(ctx, "ALTER TABLE "+s.t(claimsLocal)+" DROP PARTITION "+strconv.FormatInt(p, 10)); err != nil {
				return fmt.Errorf("drop claims partition %d: %w", p, err)
			}
		}
	}
	return nil
}
