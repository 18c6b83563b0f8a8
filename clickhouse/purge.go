package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// PurgeBefore is EventStore.PurgeBefore for one org's retention. Days
// are partitions, but every org shares them, so one org's expiry is a
// mutation (ALTER TABLE ... DELETE) on every node: it rewrites the parts
// holding the org's old rows, once, whatever limit is. It deletes the
// org's events before cutoff and their claims, and returns how many
// events that was (so a caller's loop ends at its next call, which
// finds none). Dropping whole days no org keeps is DropDaysBefore.
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
		return 0, fmt.Errorf("delete events of user %q: %w", userID, err)
	}
	return n, nil
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
		for _, table := range []string{"events_local", "event_ids_local"} {
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
