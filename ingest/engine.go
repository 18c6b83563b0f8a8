package ingest

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/scores"
)

// Engine is an events store that holds the events apart from the
// control plane (ClickHouse: docs/scale.md, "Events on ClickHouse"). The
// write path's group commit splits there: the events part of a group
// goes to the engine, the control part (allowance, usage, pins) to the
// relational database, in that order, inside the control transaction
// (splitStore).
type Engine interface {
	EventStore
	// Existing returns which of the org's event ids are stored.
	Existing(ctx context.Context, orgID string, eventIDs []string) (map[string]bool, error)
	// Fresh returns the rows whose (org_id, event_id) is not stored,
	// each key once (its first row), in rows' order.
	Fresh(ctx context.Context, rows []EventRow) ([]EventRow, error)
	// InsertStored is Insert returning the rows stored now (each key's
	// first row), in rows' order.
	InsertStored(ctx context.Context, rows []EventRow) ([]EventRow, error)
	// InsertFresh stores rows the caller has proven fresh (Fresh found
	// none of their keys stored, and they hold each key once) without
	// probing again: the spool's first shipment of what it acknowledged.
	// A row that is stored after all is stored twice (a copy every read
	// counts once, as after the race of two writers: docs/scale.md).
	InsertFresh(ctx context.Context, rows []EventRow) error
	// StoredScores returns the stored score of each key of rows that has
	// one.
	StoredScores(ctx context.Context, rows []scores.Row) (map[scores.Key]scores.Row, error)
	// UpsertScoresWritten is UpsertScores (rows of distinct keys)
	// returning what it wrote.
	UpsertScoresWritten(ctx context.Context, rows []scores.Row, receivedAt time.Time) ([]scores.Written, error)
}

// NewEngineWriter returns a writer whose groups store their events and
// scores in e and their pins and usage in db. The commit point of a group
// is the engine's write, made while the control transaction holds the
// org's usage lock; if the control transaction then fails, the events
// stay stored and the caller's retry finds them stored: their pins are
// made then (a split group pins every exposure it admits, stored now or
// not: pin is idempotent), and their usage is not counted (under, never
// over: docs/ingest.md, "What commits together").
func NewEngineWriter(db *gorm.DB, e Engine, opts Options) *Writer {
	if opts.Linger == 0 {
		opts.Linger = engineLinger
	}
	return newWriter(splitStore{control: storeOf(db), events: e}, opts)
}

// engineLinger is an engine writer's default Linger. Every insert into
// ClickHouse makes a part per table and shard, at a cost that hardly
// depends on its rows (docs/scale.md, "Benchmarks against ClickHouse"), so
// the writer runs one group at a time (splitStore.concurrency) and lets
// it gather the requests that arrive meanwhile.
const engineLinger = 50 * time.Millisecond

// splitStore runs a group's control part in the database's transaction
// and its events part in the engine.
type splitStore struct {
	control store
	events  Engine
}

// inTx runs fn with the engine's part of the group, then seals that part
// (the spool's commit point: SpooledEngine) inside the control
// transaction, which commits after it.
func (s splitStore) inTx(ctx context.Context, fn func(tx groupTx) error) error {
	return s.control.inTx(ctx, func(tx groupTx) error {
		var events sealedTx = engineTx{s.events}
		if g, ok := s.events.(groupSealer); ok {
			events = g.beginGroup()
		}
		if err := fn(splitTx{controlTx: tx, eventsTx: events}); err != nil {
			return err
		}
		return events.seal(ctx)
	})
}

// sealedTx is the engine's part of a group: its writes take effect at
// seal (a spooled group's one log entry), or at once (seal does nothing).
type sealedTx interface {
	eventsTx
	seal(ctx context.Context) error
}

// groupSealer is an Engine whose groups' writes take effect together at
// their seal (SpooledEngine: one log entry a group); on any other
// Engine each write takes effect at once.
type groupSealer interface {
	beginGroup() sealedTx
}

// concurrency: one group at a time, as large as the queue makes it
// (engineLinger); groups in parallel would split the same rows into more,
// smaller inserts.
func (s splitStore) concurrency() int { return 1 }

// splitTx is a group's transaction over two stores.
type splitTx struct {
	controlTx
	eventsTx
}

// engineTx is the events part of a group on an Engine: no day marks
// (the engine's runs read events, not rollups).
type engineTx struct{ e Engine }

func (t engineTx) existing(ctx context.Context, orgID string, eventIDs []string) (map[string]bool, error) {
	return t.e.Existing(ctx, orgID, eventIDs)
}

func (t engineTx) insert(ctx context.Context, rows []EventRow) ([]eventKey, error) {
	stored, err := t.e.InsertStored(ctx, rows)
	if err != nil {
		return nil, err
	}
	keys := make([]eventKey, len(stored))
	for i := range stored {
		keys[i] = keyOf(&stored[i])
	}
	return keys, nil
}

func (engineTx) seal(context.Context) error { return nil }

func (engineTx) markDays(context.Context, []dayMark) error { return nil }

func (engineTx) callDays(context.Context, string, []string) (map[string]time.Time, error) {
	return map[string]time.Time{}, nil
}

func (t engineTx) upsertScores(ctx context.Context, rows []scores.Row, receivedAt time.Time) ([]scores.Written, error) {
	return t.e.UpsertScoresWritten(ctx, rows, receivedAt)
}

func (t engineTx) existingScores(ctx context.Context, rows []scores.Row) (map[scores.Key]bool, error) {
	return existingOf(t.e.StoredScores(ctx, rows))
}

// existingOf is the keys of stored scores.
func existingOf(stored map[scores.Key]scores.Row, err error) (map[scores.Key]bool, error) {
	if err != nil {
		return nil, err
	}
	out := make(map[scores.Key]bool, len(stored))
	for k := range stored {
		out[k] = true
	}
	return out, nil
}
