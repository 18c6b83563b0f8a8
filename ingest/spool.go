package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tidwall/wal"
	"golang.org/x/sys/unix"

	"github.com/expd/expd/scores"
	"github.com/expd/expd/telemetry"
)

// SpoolOptions tune a SpooledEngine; zero values take the defaults.
type SpoolOptions struct {
	// MaxBytes bounds the bytes of entries not yet shipped; past it a
	// group fails with *UnavailableError (503, retry) until the shipper
	// catches up (DefaultSpoolMaxBytes).
	MaxBytes int64
	// ShipRows is the most rows one shipment gathers (100,000).
	ShipRows int
	// ShipLinger is how long the oldest unshipped entry waits for more
	// before a shipment smaller than ShipRows goes
	// (DefaultSpoolLinger): each insert
	// makes a part per table and shard, so a shipper that kept up entry
	// by entry would make nearly as many parts as no spool.
	ShipLinger time.Duration
	// Erased drops, before each shipment, the events of users erased
	// since they were acknowledged (an erasure deletes what is stored,
	// and a spooled event is not yet); nil: none is dropped.
	Erased *ErasedFilter
	// NoShip runs no shipper: entries stay in the log for the next
	// process that opens the directory (tests of the replay at start).
	NoShip bool
}

// DefaultSpoolMaxBytes is INGEST_SPOOL_MAX_BYTES's default: 1 GiB.
const DefaultSpoolMaxBytes int64 = 1 << 30

// DefaultSpoolLinger is INGEST_SPOOL_LINGER's default.
const DefaultSpoolLinger = 2 * time.Second

// SpooledEngine is an Engine whose writes are acknowledged once in a
// local, fsync'd log (tidwall/wal) and shipped to the engine behind it
// (ClickHouse) in large inserts by one goroutine: ClickHouse makes a part
// per insert, and inserts as large as the spool gathers cost its servers
// far less per event than one per group (docs/scale.md, "The ingest
// spool"). A group's new rows are one log entry, written with one fsync
// inside the control transaction: the commit point. Dedup looks in the
// spool's index of unshipped keys, then in the engine. Reads go to the
// engine (the embedded Engine): an event is readable once shipped.
type SpooledEngine struct {
	Engine // the engine shipped to; reads
	opts   SpoolOptions
	lock   *os.File
	log    *wal.Log
	logDir *os.File        // synced after each write: tidwall/wal does not sync a new segment's directory entry
	ctx    context.Context // the shipper's; cancelled when Close gives up
	cancel context.CancelFunc

	mu       sync.Mutex
	next     uint64 // index of the next entry
	shipped  uint64 // every entry up to it is shipped (and cut from the log)
	pending  []spoolMeta
	events   map[eventKey]bool
	scores   map[scores.Key]spooledScore
	bytes    int64
	rows     int
	closed   bool
	hurry    int           // Flush calls waiting: ship without lingering
	broken   error         // a failed log write: the spool takes no more
	progress chan struct{} // closed at each shipment (Flush)
	wake     chan struct{}
	stopping chan struct{}
	done     chan struct{}
}

// spoolMeta is what the index keeps of an unshipped entry.
type spoolMeta struct {
	at     time.Time
	bytes  int64
	events []eventKey
	scores []scores.Key
	// probe: the shipper probes the claims for the entry's events
	// (InsertStored) instead of writing them as they are (InsertFresh).
	// Set for an entry replayed from the log (it may have shipped before
	// the crash), one acknowledged while ClickHouse's probe failed (only
	// the index vouched for its ids), and one whose shipment failed (it
	// may be stored in part).
	probe bool
}

// spooledScore is the latest spooled score of a key and its entry.
type spooledScore struct {
	row   scores.Row
	entry uint64
}

var _ Engine = (*SpooledEngine)(nil)

// OpenSpool opens (creating) the spool in dir in front of e, replays the
// index from its log, and starts the shipper, which first ships what an
// earlier process left. One process owns a directory: a second opener
// fails.
func OpenSpool(dir string, e Engine, opts SpoolOptions) (*SpooledEngine, error) {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultSpoolMaxBytes
	}
	if opts.ShipRows <= 0 {
		opts.ShipRows = 100_000
	}
	if opts.ShipLinger <= 0 {
		opts.ShipLinger = DefaultSpoolLinger
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("ingest spool: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	l, err := openLog(filepath.Join(dir, "log"))
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("ingest spool %s: %w", dir, err)
	}
	logDir, err := os.Open(filepath.Join(dir, "log"))
	if err != nil {
		l.Close()
		lock.Close()
		return nil, fmt.Errorf("ingest spool: %w", err)
	}
	s := &SpooledEngine{Engine: e, opts: opts, lock: lock, log: l, logDir: logDir,
		events: map[eventKey]bool{}, scores: map[scores.Key]spooledScore{},
		progress: make(chan struct{}), wake: make(chan struct{}, 1), stopping: make(chan struct{}), done: make(chan struct{})}
	first, last, err := readEntries(l, func(i uint64, e *spoolEntry, size int) { s.index(i, e, size, true) })
	if err != nil {
		l.Close()
		logDir.Close()
		lock.Close()
		return nil, fmt.Errorf("ingest spool %s: %w", dir, err)
	}
	s.shipped, s.next = first-1, last+1
	s.gauges()
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if opts.NoShip {
		close(s.done)
	} else {
		go s.ship()
	}
	if s.rows > 0 {
		slog.Info("ingest spool: replaying entries not yet shipped", "dir", dir, "entries", last-first+1, "rows", s.rows, "bytes", s.bytes)
	}
	return s, nil
}

// lockDir takes the exclusive lock of dir's LOCK file, held while the
// returned file is open: a crashed process's lock goes with it.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("ingest spool: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("ingest spool %s is in use by another process: each instance needs a directory of its own", dir)
		}
		return nil, fmt.Errorf("ingest spool: lock %s: %w", dir, err)
	}
	return f, nil
}

// index adds entry i to the index of unshipped keys (s.mu held, or
// before the shipper starts); probe is spoolMeta's.
func (s *SpooledEngine) index(i uint64, e *spoolEntry, size int, probe bool) {
	m := spoolMeta{at: e.At, bytes: int64(size), probe: probe}
	for j := range e.Events {
		k := keyOf(&e.Events[j])
		s.events[k] = true
		m.events = append(m.events, k)
	}
	for _, r := range e.Scores {
		k := scores.KeyOf(&r)
		s.scores[k] = spooledScore{row: r, entry: i}
		m.scores = append(m.scores, k)
	}
	s.pending = append(s.pending, m)
	s.bytes += m.bytes
	s.rows += e.rows()
}

// gauges sets the backlog's metrics (s.mu held).
func (s *SpooledEngine) gauges() {
	telemetry.SpoolBacklogBytes.Set(float64(s.bytes))
	telemetry.SpoolBacklogRows.Set(float64(s.rows))
	age := 0.0
	if len(s.pending) > 0 {
		age = time.Since(s.pending[0].at).Seconds()
	}
	telemetry.SpoolOldestSeconds.Set(age)
}

// Existing is Engine's: the spooled ids, then the engine's for the rest.
// The spool is looked at first: a key leaves it only after its shipment
// is stored, so a key is in one or the other throughout.
func (s *SpooledEngine) Existing(ctx context.Context, orgID string, eventIDs []string) (map[string]bool, error) {
	out := map[string]bool{}
	var rest []string
	s.mu.Lock()
	for _, id := range eventIDs {
		if s.events[eventKey{orgID, id}] {
			out[id] = true
		} else {
			rest = append(rest, id)
		}
	}
	s.mu.Unlock()
	if len(rest) == 0 {
		return out, nil
	}
	stored, err := s.Engine.Existing(ctx, orgID, rest)
	if degraded(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for id := range stored {
		out[id] = true
	}
	return out, nil
}

// Fresh is Engine's: rows neither spooled nor stored, each key once.
func (s *SpooledEngine) Fresh(ctx context.Context, rows []EventRow) ([]EventRow, error) {
	fresh, _, err := s.fresh(ctx, rows)
	return fresh, err
}

// fresh is Fresh, telling whether ClickHouse's probe vouched for the
// rows (proven) or failed, so that only the index did (degraded).
func (s *SpooledEngine) fresh(ctx context.Context, rows []EventRow) (fresh []EventRow, proven bool, err error) {
	var rest []EventRow
	s.mu.Lock()
	for i := range rows {
		if !s.events[keyOf(&rows[i])] {
			rest = append(rest, rows[i])
		}
	}
	s.mu.Unlock()
	if len(rest) == 0 {
		return nil, true, nil
	}
	fresh, err = s.Engine.Fresh(ctx, rest)
	if degraded(err) {
		return firstOfEach(rest), false, nil
	}
	return fresh, true, err
}

// degraded tells whether the engine's probe failed for want of a node
// or shard (UnavailableError). The spool then answers from its index
// alone and takes the rest as new, so acknowledgements go on while
// ClickHouse is away (until MaxBytes): a retry of an event shipped before
// the outage is accepted again and counted again in the usage (the
// shipper's claim probe still stores it once). docs/ingest.md, "The
// ingest spool".
func degraded(err error) bool {
	if err == nil || !Unavailable(err) {
		return false
	}
	slog.Warn("ingest spool: ClickHouse's dedup probe failed; spooling the batch as new", "error", err)
	return true
}

// firstOfEach is rows with each key once (its first row).
func firstOfEach(rows []EventRow) []EventRow {
	seen := make(map[eventKey]bool, len(rows))
	out := make([]EventRow, 0, len(rows))
	for i := range rows {
		if k := keyOf(&rows[i]); !seen[k] {
			seen[k] = true
			out = append(out, rows[i])
		}
	}
	return out
}

// StoredScores is Engine's: the spooled score of a key (the latest
// spooled) or else the engine's.
func (s *SpooledEngine) StoredScores(ctx context.Context, rows []scores.Row) (map[scores.Key]scores.Row, error) {
	out := map[scores.Key]scores.Row{}
	var rest []scores.Row
	s.mu.Lock()
	for _, r := range rows {
		if sp, ok := s.scores[scores.KeyOf(&r)]; ok {
			out[scores.KeyOf(&r)] = sp.row
		} else {
			rest = append(rest, r)
		}
	}
	s.mu.Unlock()
	if len(rest) == 0 {
		return out, nil
	}
	stored, err := s.Engine.StoredScores(ctx, rest)
	if degraded(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for k, r := range stored {
		out[k] = r
	}
	return out, nil
}

// InsertStored is Engine's: rows spooled as one entry of their own.
func (s *SpooledEngine) InsertStored(ctx context.Context, rows []EventRow) ([]EventRow, error) {
	t := s.begin()
	if _, err := t.insert(ctx, rows); err != nil {
		return nil, err
	}
	return t.entry.Events, t.seal(ctx)
}

// InsertFresh is Engine's: rows the caller proved fresh, spooled as one
// entry of their own without a probe (the embedded engine's would write
// past the spool).
func (s *SpooledEngine) InsertFresh(ctx context.Context, rows []EventRow) error {
	t := s.begin()
	t.entry.Events = rows
	return t.seal(ctx)
}

// UpsertScoresWritten is Engine's: the winning rows spooled as one entry
// of their own.
func (s *SpooledEngine) UpsertScoresWritten(ctx context.Context, rows []scores.Row, receivedAt time.Time) ([]scores.Written, error) {
	t := s.begin()
	w, err := t.upsertScores(ctx, rows, receivedAt)
	if err != nil {
		return nil, err
	}
	return w, t.seal(ctx)
}

// begin starts a group's part on the spool: its new rows are gathered
// and written as one entry at seal.
func (s *SpooledEngine) begin() *spoolTx { return &spoolTx{engineTx: engineTx{s}, s: s} }

// beginGroup is groupSealer's: the writer's groups are spooled as one
// entry each.
func (s *SpooledEngine) beginGroup() sealedTx { return s.begin() }

// spoolTx is a group's events part on a SpooledEngine.
type spoolTx struct {
	engineTx
	s     *SpooledEngine
	entry spoolEntry
	// unproven: ClickHouse's probe failed for some of the entry's rows,
	// so its shipment probes again (spoolMeta.probe).
	unproven bool
}

// insert keeps the rows neither spooled nor stored for the entry.
func (t *spoolTx) insert(ctx context.Context, rows []EventRow) ([]eventKey, error) {
	fresh, proven, err := t.s.fresh(ctx, rows)
	if err != nil {
		return nil, err
	}
	t.unproven = t.unproven || !proven
	keys := make([]eventKey, len(fresh))
	for i := range fresh {
		keys[i] = keyOf(&fresh[i])
	}
	t.entry.Events = append(t.entry.Events, fresh...)
	return keys, nil
}

// upsertScores keeps the rows that win over the spooled or stored score
// of their key (scores.Wins), received at receivedAt, for the entry.
func (t *spoolTx) upsertScores(ctx context.Context, rows []scores.Row, receivedAt time.Time) ([]scores.Written, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	stored, err := t.s.StoredScores(ctx, rows)
	if err != nil {
		return nil, err
	}
	win, out := scores.Winners(rows, stored)
	for _, r := range win {
		if !receivedAt.IsZero() {
			r.ReceivedAt = receivedAt
		}
		t.entry.Scores = append(t.entry.Scores, r)
	}
	return out, nil
}

func (t *spoolTx) existingScores(ctx context.Context, rows []scores.Row) (map[scores.Key]bool, error) {
	return existingOf(t.s.StoredScores(ctx, rows))
}

// seal writes the group's new rows as one entry, fsync'd: once it
// returns they are acknowledged and will ship. Past the backlog bound,
// or after a failed write, it fails with *UnavailableError.
func (t *spoolTx) seal(context.Context) error {
	if t.entry.rows() == 0 {
		return nil
	}
	return t.s.append(&t.entry, t.unproven)
}

// errSpoolClosed refuses writes once Close has begun.
var errSpoolClosed = errors.New("ingest spool is closed")

// append writes e as the log's next entry and indexes it; probe is
// spoolMeta's.
func (s *SpooledEngine) append(e *spoolEntry, probe bool) error {
	e.At = time.Now().UTC()
	b := encodeEntry(e)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return &UnavailableError{Err: errSpoolClosed}
	case s.broken != nil:
		return &UnavailableError{Err: fmt.Errorf("ingest spool takes no writes after a failed one: %w", s.broken)}
	case s.bytes > 0 && s.bytes+int64(len(b)) > s.opts.MaxBytes:
		return &UnavailableError{Err: fmt.Errorf("ingest spool holds %d bytes not yet shipped to ClickHouse, its bound is %d (INGEST_SPOOL_MAX_BYTES)", s.bytes, s.opts.MaxBytes)}
	}
	err := s.log.Write(s.next, b)
	if err == nil {
		// A write that started a segment created a file; its directory
		// entry is durable only once the directory is synced (cheap when
		// nothing changed).
		err = s.logDir.Sync()
	}
	if err != nil {
		// tidwall/wal's state after a failed write is undefined: take no
		// more, ship what is there (a restart reopens the log).
		s.broken = err
		return &UnavailableError{Err: fmt.Errorf("write ingest spool entry %d: %w", s.next, err)}
	}
	s.index(s.next, e, len(b), probe)
	s.next++
	s.gauges()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}
