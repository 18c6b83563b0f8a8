package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/expd/expd/scores"
	"github.com/expd/expd/telemetry"
)

// ship is the shipper: it sends the log's oldest entries to the engine
// in one insert of up to ShipRows rows, cuts them from the log, and
// repeats; a failed shipment is logged, counted and retried after a
// backoff (doubling to 5 s), never dropped. An entry this process
// acknowledged ships the first time without the claim probe: the probe
// at its acknowledgement proved its ids fresh, and the index has kept
// every later copy out since. A shipment that may have been sent before
// (a retry, a replay after a crash between the insert and the cut)
// probes (spoolMeta.probe), so it stores each row once.
func (s *SpooledEngine) ship() {
	defer close(s.done)
	backoff := time.Duration(0)
	for {
		n, err := s.shipOnce()
		if err != nil {
			telemetry.SpoolShipErrors.WithLabelValues().Inc()
			backoff = min(max(2*backoff, 100*time.Millisecond), 5*time.Second)
			slog.Error("ingest spool: ship to ClickHouse failed; retrying", "error", err, "retry_in", backoff)
			select {
			case <-time.After(backoff):
			case <-s.ctx.Done():
				return
			}
			continue
		}
		backoff = 0
		if n > 0 {
			continue
		}
		select {
		case <-s.stopping:
			return
		default:
		}
		// Idle, or lingering: until the oldest entry is due, a write, or
		// a second (the gauges' refresh).
		wait := time.Second
		s.mu.Lock()
		if len(s.pending) > 0 {
			wait = min(wait, max(s.opts.ShipLinger-time.Since(s.pending[0].at), time.Millisecond))
		}
		s.gauges()
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-time.After(wait):
		case <-s.stopping:
		case <-s.ctx.Done():
			return
		}
	}
}

// shipOnce ships the oldest entries, up to ShipRows rows (at least one
// entry), once they are due (ShipLinger, a full block, Flush or Close),
// and returns how many rows it shipped.
func (s *SpooledEngine) shipOnce() (int, error) {
	s.mu.Lock()
	due := len(s.pending) > 0 && (s.hurry > 0 || s.closed || s.rows >= s.opts.ShipRows ||
		time.Since(s.pending[0].at) >= s.opts.ShipLinger)
	if !due {
		s.mu.Unlock()
		return 0, nil
	}
	from, rows, to, probe := s.shipped+1, 0, s.shipped, false
	for _, m := range s.pending {
		if to > s.shipped && rows+len(m.events)+len(m.scores) > s.opts.ShipRows {
			break
		}
		rows += len(m.events) + len(m.scores)
		probe = probe || m.probe
		to++
	}
	s.mu.Unlock()
	if to < from {
		return 0, nil
	}
	if err := s.shipEntries(from, to, probe); err != nil {
		// Some of it may be stored: the retry probes.
		s.mu.Lock()
		for i := range to - s.shipped {
			s.pending[i].probe = true
		}
		s.mu.Unlock()
		return 0, err
	}
	telemetry.SpoolShippedRows.WithLabelValues().Add(float64(rows))
	s.cut(to)
	return rows, nil
}

// shipEntries ships entries from..to, their events through the claim
// probe when probe is set.
func (s *SpooledEngine) shipEntries(from, to uint64, probe bool) error {
	var events []EventRow
	var scored []scores.Row
	for i := from; i <= to; i++ {
		b, err := s.log.Read(i)
		if err != nil {
			return fmt.Errorf("read spool entry %d: %w", i, err)
		}
		e, err := decodeEntry(b)
		if err != nil {
			return fmt.Errorf("spool entry %d: %w", i, err)
		}
		events = append(events, e.Events...)
		scored = append(scored, e.Scores...)
	}
	events, erased, err := s.opts.Erased.Drop(s.ctx, events)
	if err != nil {
		return fmt.Errorf("check entries %d..%d against the erasures: %w", from, to, err)
	}
	if erased > 0 {
		slog.Info("ingest spool: events of users erased since their acknowledgement are not shipped", "events", erased)
	}
	started := time.Now()
	if len(events) > 0 {
		if err := s.insert(events, probe); err != nil {
			return fmt.Errorf("ship %d events of entries %d..%d: %w", len(events), from, to, err)
		}
	}
	if len(scored) > 0 {
		// The later entry's score of a key wins ties (scores.Latest), as
		// it did when it was admitted; each keeps its own received_at.
		kept, _ := scores.Latest(scored)
		if _, err := s.Engine.UpsertScoresWritten(s.ctx, kept, time.Time{}); err != nil {
			return fmt.Errorf("ship %d scores of entries %d..%d: %w", len(kept), from, to, err)
		}
	}
	telemetry.SpoolShipSeconds.WithLabelValues().Observe(time.Since(started).Seconds())
	return nil
}

// insert writes a shipment's events: through the claim probe when it
// may have been sent before (probe), as they are otherwise.
func (s *SpooledEngine) insert(events []EventRow, probe bool) error {
	if probe {
		_, err := s.Engine.InsertStored(s.ctx, events)
		return err
	}
	return s.Engine.InsertFresh(s.ctx, events)
}

// cut cuts entries up to to from the log and the index. A failed
// cut leaves them in the log: the next cut, or the next start's replay,
// covers them (shipping twice stores once).
func (s *SpooledEngine) cut(to uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.log.TruncateFront(to + 1); err != nil {
		slog.Error("ingest spool: cut shipped entries from the log", "to", to, "error", err)
	}
	n := int(to - s.shipped)
	for _, m := range s.pending[:n] {
		for _, k := range m.events {
			delete(s.events, k)
		}
		for _, k := range m.scores {
			if sp := s.scores[k]; sp.entry <= to {
				delete(s.scores, k)
			}
		}
		s.bytes -= m.bytes
		s.rows -= len(m.events) + len(m.scores)
	}
	clear(s.pending[:n])
	s.pending = s.pending[n:]
	s.shipped = to
	s.gauges()
	close(s.progress)
	s.progress = make(chan struct{})
}

// Flush ships without lingering until every entry written before it is
// shipped, or ctx ends.
func (s *SpooledEngine) Flush(ctx context.Context) error {
	s.mu.Lock()
	target := s.next - 1
	s.hurry++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.hurry--
		s.mu.Unlock()
	}()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	for {
		s.mu.Lock()
		done, progress := s.shipped >= target, s.progress
		s.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-progress:
		case <-ctx.Done():
			return fmt.Errorf("ingest spool: wait for entries up to %d to ship: %w", target, ctx.Err())
		}
	}
}

// Backlog is the rows spooled and not yet shipped.
func (s *SpooledEngine) Backlog() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows
}

// Close refuses further writes, ships what it can until ctx ends, then
// closes the log (every entry is fsync'd already: what is left ships at
// the next start) and releases the directory.
func (s *SpooledEngine) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stopping)
	select {
	case <-s.done:
	case <-ctx.Done():
		s.cancel()
		<-s.done
	}
	s.cancel()
	s.mu.Lock()
	left := s.rows
	s.mu.Unlock()
	if left > 0 {
		slog.Warn("ingest spool: closed with rows not yet shipped; they ship at the next start on this directory", "rows", left)
	}
	err := s.log.Close()
	s.logDir.Close()
	if lerr := s.lock.Close(); err == nil {
		err = lerr
	}
	if err != nil {
		return fmt.Errorf("close ingest spool: %w", err)
	}
	return nil
}
