package ingest

import (
	"context"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/erasure"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/secrets"
)

// Options tune a Writer; zero values take the defaults.
type Options struct {
	// MaxGroupRows caps the rows merged into one transaction (10,000).
	MaxGroupRows int
	// MaxQueuedRows caps the rows waiting for a transaction; past it Write
	// fails with ErrOverloaded at once instead of queueing (200,000).
	MaxQueuedRows int
	// Concurrency is the number of group transactions in flight at once:
	// 4 on PostgreSQL, so groups' COPYs overlap other groups' commit
	// flushes; 1 on SQLite, which has a single writer.
	Concurrency int
	// Linger is how long at most a group waits for more requests before
	// it starts: it starts as soon as the clients the last group answered
	// have sent their next batches (as many rows queued since its answers
	// as it held), or a full group is queued. 0 on PostgreSQL and SQLite,
	// where a transaction's cost follows its rows; an engine's
	// (NewEngineWriter) default, where every insert pays a fixed cost (a
	// ClickHouse part per table and shard), so a few large groups beat
	// many small ones.
	Linger time.Duration
	// CommitTimeout bounds one group transaction (10 s).
	CommitTimeout time.Duration
	// Now is the clock of received_at and of the usage month.
	Now func() time.Time
	// Secrets is the server key that names erased users (package
	// erasure): events of a user erased within erasure.TombstoneTTL are
	// dropped. nil or unconfigured: no user can have been erased.
	Secrets *secrets.Keyring
}

// Writer stores batches of events with group commit: concurrent Write
// calls queue their rows, and whichever caller finds a free transaction
// slot commits everything queued so far in one transaction. There is no
// background goroutine to start or stop; under load the work is handed
// from one caller's goroutine to a fresh one so no caller waits on
// others' groups.
type Writer struct {
	store  store
	opts   Options
	erased ErasedFilter // the orgs' recent erasures (dropErased)

	mu           sync.Mutex
	queue        []*request
	queued       int           // rows in queue
	lastRows     int           // rows of the last group taken (linger)
	sinceAnswers int           // rows queued since the last group's answers went out (linger)
	free         []int         // slots (0 to Concurrency-1) of no running group transaction
	arrived      chan struct{} // a request was queued (linger wakes up)
}

// Batch is one caller's validated rows (see Preparer) for one org:
// events, and scores (package scores), which the same group transaction
// stores in their own table and counts against the same allowance.
type Batch struct {
	Tenant Tenant
	Rows   []EventRow
	Scores []scores.Row
}

// size is the number of records in b.
func (b *Batch) size() int { return len(b.Rows) + len(b.Scores) }

// Outcome counts a batch's rows once committed: Accepted were stored now,
// Duplicates were already stored (same org and event_id) or repeated. A
// score is accepted when it was stored or replaced the stored one, and a
// duplicate when an equal or later score of its key was stored already
// or came in the same group.
type Outcome struct {
	Accepted   int `json:"accepted"`
	Duplicates int `json:"duplicates"`
}

type request struct {
	batch Batch
	done  chan result
}

type result struct {
	outcome Outcome
	err     error
}

// NewWriter returns a writer on db (PostgreSQL or SQLite).
func NewWriter(db *gorm.DB, opts Options) *Writer {
	return newWriter(storeOf(db), opts)
}

func newWriter(s store, opts Options) *Writer {
	if opts.Concurrency <= 0 {
		opts.Concurrency = s.concurrency()
	}
	if opts.MaxGroupRows <= 0 {
		opts.MaxGroupRows = 10_000
	}
	if opts.MaxQueuedRows <= 0 {
		opts.MaxQueuedRows = 200_000
	}
	if opts.CommitTimeout <= 0 {
		opts.CommitTimeout = 10 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	w := &Writer{store: s, opts: opts, arrived: make(chan struct{}, 1), erased: ErasedFilter{ring: opts.Secrets, now: opts.Now}}
	for slot := opts.Concurrency - 1; slot >= 0; slot-- {
		w.free = append(w.free, slot)
	}
	return w
}

// Write stores b and returns once the transaction holding it has
// committed, or with the error that kept it from committing: an
// *AllowanceError (nothing of b stored), ErrOverloaded or an
// *UnavailableError (retry), or another storage error. If ctx ends first
// the rows may still be stored; a retry with the same event ids is safe.
func (w *Writer) Write(ctx context.Context, b Batch) (Outcome, error) {
	rows, erased, err := w.dropErased(ctx, w.readTombstones, b.Tenant.OrgID, b.Rows)
	if err != nil {
		return Outcome{}, err
	}
	b.Rows = rows
	if b.size() == 0 {
		return Outcome{Duplicates: erased}, nil
	}
	r := &request{batch: b, done: make(chan result, 1)}
	w.mu.Lock()
	if w.queued+b.size() > w.opts.MaxQueuedRows {
		w.mu.Unlock()
		return Outcome{}, ErrOverloaded
	}
	w.queue = append(w.queue, r)
	w.queued += b.size()
	w.sinceAnswers += b.size()
	slot, lead := -1, len(w.free) > 0
	if lead {
		slot, w.free = w.free[len(w.free)-1], w.free[:len(w.free)-1]
	}
	w.mu.Unlock()
	select {
	case w.arrived <- struct{}{}:
	default:
	}
	if lead {
		w.flush(slot)
	}
	select {
	case res := <-r.done:
		res.outcome.Duplicates += erased
		return res.outcome, res.err
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
}

// dropErased removes from rows the events of users erased recently
// (ErasedFilter.drop over this writer's tombstones and key). They are
// answered as duplicates: the client has delivered them and must not
// send them again, and the answer does not tell which user was erased
// (docs/privacy.md, "Events after an erasure").
func (w *Writer) dropErased(ctx context.Context, load erasure.Loader, orgID string, rows []EventRow) ([]EventRow, int, error) {
	return w.erased.drop(ctx, load, orgID, rows)
}

// readTombstones reads an org's tombstones in a transaction of its own
// (a batch's check runs before its group's transaction).
func (w *Writer) readTombstones(ctx context.Context, orgID string, since time.Time) ([]erasure.Tombstone, error) {
	var out []erasure.Tombstone
	err := w.store.inTx(ctx, func(tx groupTx) error {
		var err error
		out, err = tx.tombstones(ctx, orgID, since)
		return err
	})
	return out, err
}

// flush commits one group in slot, then hands the slot on to a new
// goroutine while more is queued, so the calling request can answer.
func (w *Writer) flush(slot int) {
	w.linger()
	group := w.take()
	w.commit(group, slot)
	w.mu.Lock()
	more := len(w.queue) > 0
	if !more {
		w.free = append(w.free, slot)
	}
	w.mu.Unlock()
	if more {
		go w.flush(slot)
	}
}

// linger waits, Linger at most, until the clients the last group
// answered have sent their next batches (as many rows queued since its
// answers as it held), or a full group is queued; the first group waits
// for a full one. Under a steady load they come back within
// milliseconds, so the next group starts as soon as they are in instead
// of after a fixed wait, and holds every client's batch.
func (w *Writer) linger() {
	if w.opts.Linger <= 0 {
		return
	}
	timer := time.NewTimer(w.opts.Linger)
	defer timer.Stop()
	for {
		w.mu.Lock()
		ready := w.queued >= w.opts.MaxGroupRows || w.lastRows > 0 && w.sinceAnswers >= w.lastRows
		w.mu.Unlock()
		if ready {
			return
		}
		select {
		case <-w.arrived:
		case <-timer.C:
			return
		}
	}
}

// answering marks the moment a group's answers go out: linger counts
// the rows queued after it.
func (w *Writer) answering() {
	w.mu.Lock()
	w.sinceAnswers = 0
	w.mu.Unlock()
}

// take dequeues requests up to MaxGroupRows (always at least one).
func (w *Writer) take() []*request {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, rows := 0, 0
	for n < len(w.queue) && (n == 0 || rows+w.queue[n].batch.size() <= w.opts.MaxGroupRows) {
		rows += w.queue[n].batch.size()
		n++
	}
	group := append([]*request(nil), w.queue[:n]...)
	clear(w.queue[:n])
	w.queue = w.queue[n:]
	w.queued -= rows
	w.lastRows = rows
	return group
}
