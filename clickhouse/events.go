package clickhouse

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/ext"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/vocab"
)

var _ ingest.EventStore = (*Store)(nil)

// micros is t as the schema stores it.
func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// existing returns which of the org's event ids have a claim (stored
// events); the ids name no user, so every shard is asked for all of them.
func (s *Store) existing(ctx context.Context, orgID string, ids []string) (map[string]bool, error) {
	all := make([][]string, len(s.shards))
	for i := range all {
		all[i] = ids
	}
	return s.existingOn(ctx, orgID, all)
}

// existingOn is existing probing shard i for ids[i] alone. The shards'
// local claims are probed at once, the ids sent as an external table:
// native data, where a literal IN list of 10,000 ids was 500 KB of SQL
// for 18.16 to parse on the node and again on every shard (0.6-2 s a
// probe, docs/scale.md).
func (s *Store) existingOn(ctx context.Context, orgID string, ids [][]string) (map[string]bool, error) {
	found := make([][]string, len(s.shards))
	err := s.onShards(ctx, func(ctx context.Context, i int, c driver.Conn) error {
		if len(ids[i]) == 0 {
			return nil
		}
		tbl, err := idTable(ids[i])
		if err != nil {
			return err
		}
		rows, err := c.Query(ch.Context(ctx, ch.WithExternalTable(tbl)),
			"SELECT event_id FROM "+s.t(claimsLocal)+" WHERE org_id = ? AND event_id IN "+tbl.Name(), orgID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			found[i] = append(found[i], id)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("find stored event ids: %w", err)
	}
	out := make(map[string]bool)
	for _, ids := range found {
		for _, id := range ids {
			out[id] = true
		}
	}
	return out, nil
}

// idTable is ids as the external table _ids (one String column, id) of
// a query.
func idTable(ids []string) (*ext.Table, error) {
	tbl, err := ext.NewTable("_ids", ext.Column("id", "String"))
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if err := tbl.Append(id); err != nil {
			return nil, err
		}
	}
	return tbl, nil
}

// onShards runs fn on every shard's connection at once and returns the
// first error (naming its shard) after all have returned.
func (s *Store) onShards(ctx context.Context, fn func(ctx context.Context, i int, c driver.Conn) error) error {
	errs := make([]error, len(s.shards))
	var wg sync.WaitGroup
	for i, c := range s.shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(ctx, i, c); err != nil {
				errs[i] = fmt.Errorf("shard %d: %w", i+1, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Insert stores the rows whose (org_id, event_id) has no claim yet, each
// key once, and returns how many (InsertStored).
func (s *Store) Insert(ctx context.Context, rows []ingest.EventRow) (int, error) {
	stored, err := s.InsertStored(ctx, rows)
	return len(stored), err
}

// Fresh is ingest.Engine's: rows without the keys already claimed, each key once (its
// first row). Each shard is asked for the ids of its own users only (the
// claim of an event sits on the event's shard).
func (s *Store) Fresh(ctx context.Context, rows []ingest.EventRow) ([]ingest.EventRow, error) {
	byOrg := map[string][][]string{}
	for i := range rows {
		r := &rows[i]
		ids := byOrg[r.OrgID]
		if ids == nil {
			ids = make([][]string, len(s.shards))
			byOrg[r.OrgID] = ids
		}
		n := s.shardOf(r.OrgID, r.UserID)
		ids[n] = append(ids[n], r.EventID)
	}
	stored := map[[2]string]bool{}
	for org, ids := range byOrg {
		have, err := s.existingOn(ctx, org, ids)
		if err != nil {
			return nil, unavailable(err)
		}
		for id := range have {
			stored[[2]string{org, id}] = true
		}
	}
	var out []ingest.EventRow
	for i := range rows {
		k := [2]string{rows[i].OrgID, rows[i].EventID}
		if !stored[k] {
			stored[k] = true
			out = append(out, rows[i])
		}
	}
	return out, nil
}

// write inserts rows (not yet claimed) into each shard's events_local,
// the shards at once, each shard's rows routed as the Distributed table
// would (shardOf). One insert per shard: the view of migration 0003
// derives the claims from the events in the same INSERT, after the
// events' part is written, so an event is stored before its claim. A
// shard that fails leaves the others' rows stored; the retry the caller
// is asked for finds those claimed and writes the rest (docs/scale.md,
// "Write path").
func (s *Store) write(ctx context.Context, rows []ingest.EventRow) error {
	byShard := make([][]*ingest.EventRow, len(s.shards))
	for i := range rows {
		r := &rows[i]
		n := s.shardOf(r.OrgID, r.UserID)
		byShard[n] = append(byShard[n], r)
	}
	err := s.onShards(ctx, func(ctx context.Context, i int, c driver.Conn) error {
		if len(byShard[i]) == 0 {
			return nil
		}
		return insertEvents(ctx, c, s.t(eventsLocal), byShard[i])
	})
	if err != nil {
		return fmt.Errorf("insert %d events: %w", len(rows), err)
	}
	return nil
}

// insertEvents writes rows into table with one batch on c.
func insertEvents(ctx context.Context, c driver.Conn, table string, rows []*ingest.EventRow) error {
	ctx, release := batchContext(ctx)
	defer release()
	b, err := c.PrepareBatch(ctx, "INSERT INTO "+table+" ("+strings.Join(ingest.EventColumns, ", ")+")")
	if err != nil {
		return err
	}
	vals := make([]any, 0, len(ingest.EventColumns))
	for _, r := range rows {
		vals = ingest.AppendEventValues(vals[:0], r, r.OrgID, r.ExperimentID)
		vals[ingest.TsColumn], vals[ingest.TsColumn+1] = micros(r.Ts), micros(r.ReceivedAt)
		if err := b.Append(vals...); err != nil {
			b.Abort()
			return fmt.Errorf("event %s: %w", r.EventID, err)
		}
	}
	return b.Send()
}

// selectEvents is the column list of an event read, in scanEvent order.
var selectEvents = strings.Join(ingest.EventColumns, ", ")

// scanEvent reads one row of selectEvents.
func scanEvent(rows driver.Rows) (ingest.EventRow, error) {
	var r ingest.EventRow
	var typ string
	var ts, received int64
	dest := []any{&r.OrgID, &r.EventID, &typ, &r.ExperimentID, &r.UserID, &r.Variant, &ts, &received, &r.ConfigVersion}
	for _, f := range vocab.ModelCallFields {
		dest = append(dest, f.Dest(&r.ModelCall))
	}
	dest = append(dest, &r.BusinessMetric, &r.Value, &r.Source)
	if err := rows.Scan(dest...); err != nil {
		return r, err
	}
	r.Type, r.Ts, r.ReceivedAt = vocab.RecordType(typ), fromMicros(ts), fromMicros(received)
	return r, nil
}

// readEvents runs a read of whole events.
func (s *Store) readEvents(ctx context.Context, what, where string, args ...any) ([]ingest.EventRow, error) {
	rows, err := s.conn.Query(ctx, "SELECT "+selectEvents+" FROM "+s.t(s.events)+" FINAL WHERE "+where, args...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	defer rows.Close()
	var out []ingest.EventRow
	for rows.Next() {
		r, err := scanEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return out, nil
}

// Read is EventStore.Read.
func (s *Store) Read(ctx context.Context, f ingest.ReadFilter) ([]ingest.EventRow, error) {
	where, args := "org_id = ? AND experiment_id = ?", []any{f.OrgID, f.ExperimentID}
	if f.Type != "" {
		where, args = where+" AND type = ?", append(args, string(f.Type))
	}
	if f.UserID != "" {
		where, args = where+" AND user_id = ?", append(args, f.UserID)
	}
	return s.readEvents(ctx, "events", where+" ORDER BY ts DESC, event_id DESC LIMIT ?", append(args, f.Limit)...)
}

// ReadUser is EventStore.ReadUser.
func (s *Store) ReadUser(ctx context.Context, orgID, userID string) ([]ingest.EventRow, error) {
	return s.readEvents(ctx, "events of a user of org "+orgID, "org_id = ? AND user_id = ? ORDER BY ts, event_id", orgID, userID)
}

// ReadUserPage is EventStore.ReadUserPage.
func (s *Store) ReadUserPage(ctx context.Context, orgID, userID string, after ingest.UserPosition, limit int) ([]ingest.EventRow, error) {
	where, args := "org_id = ? AND user_id = ?", []any{orgID, userID}
	if after.AfterID != "" {
		where, args = where+" AND (ts > ? OR ts = ? AND event_id > ?)", append(args, micros(after.AfterTs), micros(after.AfterTs), after.AfterID)
	}
	return s.readEvents(ctx, "a page of a user's events of org "+orgID, where+fmt.Sprintf(" ORDER BY ts, event_id LIMIT %d", limit), args...)
}

// ReadCalls is EventStore.ReadCalls.
func (s *Store) ReadCalls(ctx context.Context, f ingest.CallFilter) ([]ingest.EventRow, error) {
	where, args := "org_id = ? AND experiment_id = ? AND type = ?", []any{f.OrgID, f.ExperimentID, string(vocab.TypeModelCall)}
	if f.Variant != "" {
		where, args = where+" AND variant = ?", append(args, f.Variant)
	}
	if f.Model != "" {
		where, args = where+" AND model = ?", append(args, f.Model)
	}
	if f.Error != nil {
		if *f.Error {
			where += " AND ifNull(error, '') <> ''"
		} else {
			where += " AND ifNull(error, '') = ''"
		}
	}
	if f.Scored != nil {
		sub, subArgs := "SELECT call_id FROM "+s.t(s.scores)+" FINAL WHERE org_id = ? AND name = ?", []any{f.OrgID, f.Scored.Name}
		if f.Scored.Min != nil {
			sub, subArgs = sub+" AND value >= ?", append(subArgs, *f.Scored.Min)
		}
		if f.Scored.Max != nil {
			sub, subArgs = sub+" AND value <= ?", append(subArgs, *f.Scored.Max)
		}
		// GLOBAL: the scores of a call sit on its own shard, not the
		// caller's.
		where, args = where+" AND event_id GLOBAL IN ("+sub+")", append(args, subArgs...)
	}
	if !f.From.IsZero() {
		where, args = where+" AND ts >= ?", append(args, micros(f.From))
	}
	if !f.To.IsZero() {
		where, args = where+" AND ts < ?", append(args, micros(f.To))
	}
	if f.BeforeID != "" {
		where, args = where+" AND (ts < ? OR (ts = ? AND event_id < ?))", append(args, micros(f.BeforeTs), micros(f.BeforeTs), f.BeforeID)
	}
	return s.readEvents(ctx, "model calls", where+" ORDER BY ts DESC, event_id DESC LIMIT ?", append(args, f.Limit)...)
}

// ReadNewCalls is EventStore.ReadNewCalls.
func (s *Store) ReadNewCalls(ctx context.Context, f ingest.NewCallsFilter) ([]ingest.EventRow, error) {
	where, args := "org_id = ? AND type = ?", []any{f.OrgID, string(vocab.TypeModelCall)}
	if len(f.ExperimentIDs) > 0 {
		where += " AND experiment_id IN " + quoteList(f.ExperimentIDs)
	}
	if !f.AfterReceived.IsZero() {
		at := micros(f.AfterReceived)
		where, args = where+" AND (received_at > ? OR (received_at = ? AND event_id > ?))", append(args, at, at, f.AfterID)
	}
	if !f.ReceivedBefore.IsZero() {
		where, args = where+" AND received_at < ?", append(args, micros(f.ReceivedBefore))
	}
	if !f.From.IsZero() {
		where, args = where+" AND ts >= ?", append(args, micros(f.From))
	}
	if !f.To.IsZero() {
		where, args = where+" AND ts < ?", append(args, micros(f.To))
	}
	return s.readEvents(ctx, "new model calls", where+" ORDER BY received_at, event_id LIMIT ?", append(args, f.Limit)...)
}

// ReadCall is EventStore.ReadCall: the claim names the call's experiment
// and user, so the event is read through the events' key.
func (s *Store) ReadCall(ctx context.Context, orgID, eventID string) (ingest.EventRow, bool, error) {
	rows, err := s.readEvents(ctx, "model call "+eventID,
		"org_id = ? AND (experiment_id, user_id) GLOBAL IN (SELECT experiment_id, user_id FROM "+s.t(s.claims)+" WHERE org_id = ? AND event_id = ?) AND event_id = ? AND type = ? LIMIT 1",
		orgID, orgID, eventID, eventID, string(vocab.TypeModelCall))
	if err != nil || len(rows) == 0 {
		return ingest.EventRow{}, false, err
	}
	return rows[0], true, nil
}

// UpsertScores is EventStore.UpsertScores (UpsertScoresWritten). A day's
// rollups going stale does not apply: runs on ClickHouse read events.
func (s *Store) UpsertScores(ctx context.Context, rows []scores.Row, receivedAt time.Time) (int, error) {
	kept, _ := scores.Latest(rows)
	w, err := s.UpsertScoresWritten(ctx, kept, receivedAt)
	return len(w), err
}

// UpsertScoresWritten is ingest.Engine's: the stored scores of the keys
// are read (FINAL) and only the rows that win over them are inserted, so
// the last inserted row of a key is its score. A zero receivedAt keeps
// each row's own ReceivedAt (a copy of stored scores, package eventcopy).
func (s *Store) UpsertScoresWritten(ctx context.Context, kept []scores.Row, receivedAt time.Time) ([]scores.Written, error) {
	if len(kept) == 0 {
		return nil, nil
	}
	stored, err := s.StoredScores(ctx, kept)
	if err != nil {
		return nil, err
	}
	win, out := scores.Winners(kept, stored)
	if len(win) == 0 {
		return nil, nil
	}
	ctx, release := batchContext(ctx)
	defer release()
	b, err := s.conn.PrepareBatch(ctx, "INSERT INTO "+s.t(s.scores)+" (org_id, call_id, name, source, value, ts, received_at, comment, evaluator, evaluator_version, judge_model)")
	if err != nil {
		return nil, fmt.Errorf("upsert %d scores: %w", len(win), err)
	}
	for _, r := range win {
		at := receivedAt
		if at.IsZero() {
			at = r.ReceivedAt
		}
		if err := b.Append(r.OrgID, r.CallID, r.Name, r.Source, r.Value, micros(r.Ts), micros(at), r.Comment, r.Evaluator, r.EvaluatorVersion, r.JudgeModel); err != nil {
			b.Abort()
			return nil, fmt.Errorf("upsert score of call %s: %w", r.CallID, err)
		}
	}
	if err := b.Send(); err != nil {
		return nil, fmt.Errorf("upsert %d scores: %w", len(win), err)
	}
	return out, nil
}

// StoredScores is ingest.Engine's StoredScores: the stored scores of the
// keys of rows.
func (s *Store) StoredScores(ctx context.Context, rows []scores.Row) (map[scores.Key]scores.Row, error) {
	byOrg := map[string][]string{}
	for _, r := range rows {
		byOrg[r.OrgID] = append(byOrg[r.OrgID], r.CallID)
	}
	out := map[scores.Key]scores.Row{}
	for org, calls := range byOrg {
		stored, err := s.scoresOf(ctx, org, calls)
		if err != nil {
			return nil, unavailable(err)
		}
		for _, r := range stored {
			out[scores.KeyOf(&r)] = r
		}
	}
	return out, nil
}

// ScoresOfCalls is EventStore.ScoresOfCalls.
func (s *Store) ScoresOfCalls(ctx context.Context, orgID string, callIDs []string) (map[string][]scores.Row, error) {
	stored, err := s.scoresOf(ctx, orgID, callIDs)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]scores.Row, len(callIDs))
	for _, r := range stored {
		out[r.CallID] = append(out[r.CallID], r)
	}
	return out, nil
}

// scoresOf reads the stored scores of the org's calls, sorted by call,
// name and source. FINAL keeps each key's last inserted row, the one the
// write path let win (UpsertScoresWritten inserts only winners); a key's
// rows share a shard (sharded by org and call), so each shard's FINAL
// over its local scores collapses them. The calls go to every shard at
// once as an external table (existing).
func (s *Store) scoresOf(ctx context.Context, orgID string, callIDs []string) ([]scores.Row, error) {
	callIDs = slices.Compact(slices.Sorted(slices.Values(callIDs)))
	found := make([][]scores.Row, len(s.shards))
	err := s.onShards(ctx, func(ctx context.Context, i int, c driver.Conn) error {
		tbl, err := idTable(callIDs)
		if err != nil {
			return err
		}
		q, err := c.Query(ch.Context(ctx, ch.WithExternalTable(tbl)), "SELECT org_id, call_id, name, source, value, ts, received_at, comment, evaluator, evaluator_version, judge_model FROM "+
			s.t(scoresLocal)+" FINAL WHERE org_id = ? AND call_id IN "+tbl.Name(), orgID)
		if err != nil {
			return err
		}
		defer q.Close()
		for q.Next() {
			var r scores.Row
			var ts, received int64
			if err := q.Scan(&r.OrgID, &r.CallID, &r.Name, &r.Source, &r.Value, &ts, &received, &r.Comment, &r.Evaluator, &r.EvaluatorVersion, &r.JudgeModel); err != nil {
				return err
			}
			r.Ts, r.ReceivedAt = fromMicros(ts), fromMicros(received)
			found[i] = append(found[i], r)
		}
		return q.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("read stored scores: %w", err)
	}
	out := slices.Concat(found...)
	slices.SortFunc(out, func(a, b scores.Row) int {
		return cmp.Or(strings.Compare(a.CallID, b.CallID), strings.Compare(a.Name, b.Name), strings.Compare(a.Source, b.Source))
	})
	return out, nil
}

var _ ingest.Engine = (*Store)(nil)

// Existing is ingest.Engine's Existing.
func (s *Store) Existing(ctx context.Context, orgID string, eventIDs []string) (map[string]bool, error) {
	return s.existing(ctx, orgID, eventIDs)
}

// InsertStored is ingest.Engine's InsertStored: the claim probe, then
// the write of what it found fresh.
func (s *Store) InsertStored(ctx context.Context, rows []ingest.EventRow) ([]ingest.EventRow, error) {
	fresh, err := s.Fresh(ctx, rows)
	if err != nil || len(fresh) == 0 {
		return nil, err
	}
	return fresh, s.InsertFresh(ctx, fresh)
}

// InsertFresh is ingest.Engine's InsertFresh: the write alone.
func (s *Store) InsertFresh(ctx context.Context, rows []ingest.EventRow) error {
	if err := s.write(ctx, rows); err != nil {
		return unavailable(err)
	}
	return nil
}
