package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/expd/expd/erasure"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/secrets"
)

// fakeStore records transactions; insert takes a while so that concurrent
// writers pile up behind it, and fail makes every transaction fail.
type fakeStore struct {
	mu     sync.Mutex
	txs    int
	stored map[eventKey]bool
	fail   error
	tombs  []erasure.Tombstone // every org's
	reads  int                 // of tombs
}

func (s *fakeStore) concurrency() int { return 1 }

func (s *fakeStore) inTx(ctx context.Context, fn func(groupTx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.txs++
	if s.fail != nil {
		return s.fail
	}
	return fn(fakeTx{s})
}

type fakeTx struct{ s *fakeStore }

func (fakeTx) lockUsage(context.Context, string, []string) (map[string]int64, error) {
	return map[string]int64{}, nil
}

func (t fakeTx) existing(_ context.Context, org string, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, id := range ids {
		if t.s.stored[eventKey{org, id}] {
			out[id] = true
		}
	}
	return out, nil
}

func (t fakeTx) insert(_ context.Context, rows []EventRow) ([]eventKey, error) {
	time.Sleep(5 * time.Millisecond)
	var out []eventKey
	for i := range rows {
		if k := keyOf(&rows[i]); !t.s.stored[k] {
			t.s.stored[k] = true
			out = append(out, k)
		}
	}
	return out, nil
}

func (fakeTx) upsertScores(context.Context, []scores.Row, time.Time) ([]scores.Written, error) {
	return nil, nil
}

func (fakeTx) existingScores(context.Context, []scores.Row) (map[scores.Key]bool, error) {
	return nil, nil
}

func (fakeTx) addUsage(context.Context, string, []usageDelta) error { return nil }
func (fakeTx) markDays(context.Context, []dayMark) error            { return nil }
func (fakeTx) pin(context.Context, []EventRow) error                { return nil }
func (fakeTx) callDays(context.Context, string, []string) (map[string]time.Time, error) {
	return nil, nil
}

func (t fakeTx) tombstones(context.Context, string, time.Time) ([]erasure.Tombstone, error) {
	t.s.reads++
	return t.s.tombs, nil
}

func rowsOf(org string, ids ...string) []EventRow {
	out := make([]EventRow, len(ids))
	for i, id := range ids {
		out[i] = EventRow{OrgID: org, EventID: id}
	}
	return out
}

func TestWriterMergesConcurrentBatchesIntoFewTransactions(t *testing.T) {
	fs := &fakeStore{stored: map[eventKey]bool{}}
	w := newWriter(fs, Options{})
	const writers = 40
	outcomes := make([]Outcome, writers)
	var wg sync.WaitGroup
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each writer repeats the shared id "dup" and has one of its own.
			b := Batch{Tenant: Tenant{OrgID: "o", Plan: plans.Enterprise}, Rows: rowsOf("o", "dup", fmt.Sprint("own-", i))}
			o, err := w.Write(context.Background(), b)
			if err != nil {
				t.Error(err)
			}
			outcomes[i] = o
		}()
	}
	wg.Wait()
	accepted, duplicates := 0, 0
	for _, o := range outcomes {
		accepted += o.Accepted
		duplicates += o.Duplicates
	}
	if accepted != writers+1 || duplicates != writers-1 {
		t.Fatalf("accepted %d duplicates %d, want %d and %d", accepted, duplicates, writers+1, writers-1)
	}
	if fs.txs >= writers/2 {
		t.Fatalf("%d transactions for %d concurrent writes: not grouped", fs.txs, writers)
	}
	t.Logf("%d concurrent writes in %d transactions", writers, fs.txs)
}

// With Linger, a group waits for the requests that follow its first:
// writes arriving one after another share one transaction, where without
// it the first would commit alone.
func TestWriterLingerGathersTheRequestsThatFollow(t *testing.T) {
	fs := &fakeStore{stored: map[eventKey]bool{}}
	w := newWriter(fs, Options{Linger: time.Second})
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := Batch{Tenant: Tenant{OrgID: "o", Plan: plans.Enterprise}, Rows: rowsOf("o", fmt.Sprint("e-", i))}
			if o, err := w.Write(context.Background(), b); err != nil || o.Accepted != 1 {
				t.Errorf("Write %d = %+v, %v", i, o, err)
			}
		}()
		time.Sleep(10 * time.Millisecond)
	}
	wg.Wait()
	if fs.txs != 1 {
		t.Fatalf("5 writes 10 ms apart in %d transactions; want 1 (they arrive within the linger)", fs.txs)
	}
}

// After a group, the next one starts as soon as as many rows are queued
// as that group held, not after the whole Linger: here an hour, which
// the test would wait out (and time out) otherwise.
func TestWriterLingerEndsWhenTheLastGroupsRowsAreQueued(t *testing.T) {
	fs := &fakeStore{stored: map[eventKey]bool{}}
	w := newWriter(fs, Options{Linger: time.Hour, MaxGroupRows: 4})
	tenant := Tenant{OrgID: "o", Plan: plans.Enterprise}
	if o, err := w.Write(context.Background(), Batch{Tenant: tenant, Rows: rowsOf("o", "a", "b", "c", "d")}); err != nil || o.Accepted != 4 {
		t.Fatalf("a full group = %+v, %v", o, err)
	}
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := Batch{Tenant: tenant, Rows: rowsOf("o", fmt.Sprint("x-", i), fmt.Sprint("y-", i))}
			if o, err := w.Write(context.Background(), b); err != nil || o.Accepted != 2 {
				t.Errorf("Write %d = %+v, %v", i, o, err)
			}
		}()
	}
	wg.Wait()
	if fs.txs != 2 {
		t.Fatalf("%d transactions; want 2 (the second group waits for the 4 rows the first held, then takes both writes)", fs.txs)
	}
}

func TestWriterReportsUnavailableAndOverload(t *testing.T) {
	fs := &fakeStore{stored: map[eventKey]bool{}, fail: fmt.Errorf("begin: %w", io.ErrUnexpectedEOF)}
	w := newWriter(fs, Options{MaxQueuedRows: 3})
	b := Batch{Tenant: Tenant{OrgID: "o"}, Rows: rowsOf("o", "a")}
	if _, err := w.Write(context.Background(), b); !Unavailable(err) {
		t.Fatalf("lost connection: %v, want unavailable", err)
	}
	fs.fail = errors.New("syntax error at or near")
	if _, err := w.Write(context.Background(), b); err == nil || Unavailable(err) {
		t.Fatalf("SQL error: %v, want a plain error", err)
	}
	big := Batch{Tenant: Tenant{OrgID: "o"}, Rows: rowsOf("o", "a", "b", "c", "d")}
	if _, err := w.Write(context.Background(), big); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("over the queue bound: %v", err)
	}
}

func TestAllowanceRefusesWholeBatchesAndCountsDuplicatesFree(t *testing.T) {
	fs := &fakeStore{stored: map[eventKey]bool{{"o", "old"}: true}}
	tx := fakeTx{fs}
	free := Tenant{OrgID: "o", Plan: plans.Free}
	limit := free.Allowance()
	group := []*request{
		{batch: Batch{Tenant: free, Rows: rowsOf("o", "old", "n1")}}, // one new
		{batch: Batch{Tenant: free, Rows: rowsOf("o", "n2", "n3")}},  // two new: over
		{batch: Batch{Tenant: free, Rows: rowsOf("o", "old")}},       // duplicates only
	}
	owned, _ := splitOwnership(group)
	usage := usageTx{fakeTx: tx, used: limit - 2}
	refusals, err := admit(context.Background(), usage, "2026-11", group, owned, splitScores(group))
	if err != nil {
		t.Fatal(err)
	}
	var over *AllowanceError
	if refusals[0] != nil || !errors.As(refusals[1], &over) || refusals[2] != nil {
		t.Fatalf("refusals %v: want only the second batch refused", refusals)
	}
	if over.Adding != 2 || over.Used != limit-1 || over.Allowance != limit {
		t.Fatalf("refusal %+v", over)
	}
}

// usageTx reports a fixed usage for every org.
type usageTx struct {
	fakeTx
	used int64
}

func (u usageTx) lockUsage(_ context.Context, _ string, orgs []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, o := range orgs {
		out[o] = u.used
	}
	return out, nil
}

// An erased user's events are dropped and answered as duplicates; the
// org's tombstones are read once for many batches (none of which names
// an erased user, but the first), and again once the cached set is older
// than erasure.TombstoneMaxAge.
func TestWriterDropsErasedUsersReadingTombstonesOnce(t *testing.T) {
	key, err := secrets.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	ring, err := secrets.Parse(key, "")
	if err != nil {
		t.Fatal(err)
	}
	hash, err := erasure.UserHash(ring, "erased")
	if err != nil {
		t.Fatal(err)
	}
	old, err := erasure.UserHash(ring, "erased-long-ago")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	fs := &fakeStore{stored: map[eventKey]bool{}, tombs: []erasure.Tombstone{
		{UserHash: hash, CreatedAt: now.Add(-time.Hour)},
		{UserHash: old, CreatedAt: now.Add(-erasure.TombstoneTTL - time.Hour)}, // a new user by now
	}}
	w := newWriter(fs, Options{Secrets: ring})
	batch := func(i int, users ...string) Batch {
		b := Batch{Tenant: Tenant{OrgID: "o", Plan: plans.Enterprise}}
		for j, u := range users {
			b.Rows = append(b.Rows, EventRow{OrgID: "o", EventID: fmt.Sprintf("e-%d-%d", i, j), UserID: u})
		}
		return b
	}
	o, err := w.Write(t.Context(), batch(0, "a", "erased", "erased-long-ago", "erased"))
	if err != nil || o.Accepted != 2 || o.Duplicates != 2 {
		t.Fatalf("Write = %+v, %v; want 2 accepted (one of a user erased past erasure.TombstoneTTL) and the erased user's 2 answered as duplicates", o, err)
	}
	if fs.stored[eventKey{"o", "e-0-1"}] || fs.stored[eventKey{"o", "e-0-3"}] {
		t.Error("an erased user's event was stored")
	}
	for i := 1; i <= 20; i++ {
		if o, err := w.Write(t.Context(), batch(i, "a", fmt.Sprint("u", i))); err != nil || o.Accepted != 2 {
			t.Fatalf("Write = %+v, %v; want 2 accepted", o, err)
		}
	}
	if fs.reads != 1 {
		t.Errorf("21 batches within erasure.TombstoneMaxAge read the tombstones %d times; want once", fs.reads)
	}
	time.Sleep(erasure.TombstoneMaxAge + 50*time.Millisecond)
	if o, err := w.Write(t.Context(), batch(99, "erased", "c")); err != nil || o.Accepted != 1 || o.Duplicates != 1 {
		t.Fatalf("Write after the cache aged = %+v, %v; want 1 accepted, 1 dropped", o, err)
	}
	if fs.reads != 2 {
		t.Errorf("after erasure.TombstoneMaxAge the tombstones were read %d times in all; want twice", fs.reads)
	}
	// Without a server key nothing is read.
	plain := &fakeStore{stored: map[eventKey]bool{}, tombs: fs.tombs}
	if _, err := newWriter(plain, Options{}).Write(t.Context(), batch(0, "erased")); err != nil || plain.reads != 0 {
		t.Errorf("without a key: %v, %d tombstone reads; want none", err, plain.reads)
	}
}
