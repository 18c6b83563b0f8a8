package clickhouse_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/expd/expd/assignments"
	"github.com/expd/expd/clickhouse"
	"github.com/expd/expd/clickhouse/clickhousetest"
	"github.com/expd/expd/erasure"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/results/resultstest"
	"github.com/expd/expd/scores"
	"github.com/expd/expd/vocab"
)

// spoolFixture is an org with an experiment, events on the cluster and
// a spool directory.
type spoolFixture struct {
	s      *clickhouse.Store
	db     *gorm.DB
	tenant ingest.Tenant
	exp    string
	dir    string
	at     time.Time
}

func newSpoolFixture(t *testing.T, s *clickhouse.Store) *spoolFixture {
	db := testenv.DB(t)
	org := testenv.NewOrg(t, db, testenv.Signer(t))
	exp := resultstest.Experiment(t, db, org.ID, resultstest.Config("spool"))
	return &spoolFixture{s: s, db: db, tenant: ingest.Tenant{OrgID: org.ID, Plan: plans.Business}, exp: exp.ID,
		dir: t.TempDir(), at: time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)}
}

// open opens the fixture's spool, closed at cleanup.
func (f *spoolFixture) open(t *testing.T, opts ingest.SpoolOptions) *ingest.SpooledEngine {
	t.Helper()
	sp, err := ingest.OpenSpool(f.dir, f.s, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close(context.Background()) })
	return sp
}

// exposures are n exposures of distinct users, ids prefix-0 on.
func (f *spoolFixture) exposures(prefix string, n int) []ingest.EventRow {
	var out []ingest.EventRow
	for i := range n {
		out = append(out, ingest.EventRow{OrgID: f.tenant.OrgID, EventID: fmt.Sprintf("%s-%d", prefix, i), Type: vocab.TypeExposure,
			ExperimentID: f.exp, UserID: fmt.Sprintf("%s-user-%d", prefix, i), Variant: resultstest.Arms[i%2], Ts: f.at, Source: ingest.SourceAPI})
	}
	return out
}

func (f *spoolFixture) write(t *testing.T, w *ingest.Writer, b ingest.Batch) ingest.Outcome {
	t.Helper()
	b.Tenant = f.tenant
	out, err := w.Write(t.Context(), b)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	return out
}

// inserted is the org's rows by id as inserted on the shards (no FINAL).
func (f *spoolFixture) inserted(t *testing.T) map[string]int {
	t.Helper()
	ids, err := f.s.InsertedIDs(t.Context(), f.tenant.OrgID)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// insertedOnce checks that want events are on the cluster, each
// inserted once.
func (f *spoolFixture) insertedOnce(t *testing.T, want int) {
	t.Helper()
	got := f.inserted(t)
	if len(got) != want {
		t.Fatalf("%d events on the cluster; want %d", len(got), want)
	}
	for id, n := range got {
		if n != 1 {
			t.Errorf("event %s inserted %d times; want once", id, n)
		}
	}
}

func (f *spoolFixture) usage(t *testing.T) int64 {
	t.Helper()
	used, err := ingest.MonthlyUsage(t.Context(), f.db, f.tenant.OrgID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return used
}

func flush(t *testing.T, sp *ingest.SpooledEngine) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := sp.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// A batch acknowledged into the spool is pinned and counted at once,
// its retry before shipping is all duplicates (the spool's index), and a
// spool closed before shipping is replayed by the next opener: every
// event lands on the cluster exactly once, and a retry after shipping is
// all duplicates too (ClickHouse's claims); the usage counts each once.
func TestSpoolAcksThenShipsEachEventOnce(t *testing.T) {
	f := newSpoolFixture(t, clickhousetest.Store(t, true))
	sp := f.open(t, ingest.SpoolOptions{NoShip: true})
	w := ingest.NewEngineWriter(f.db, sp, ingest.Options{})
	rows := f.exposures("a", 20)
	batch := ingest.Batch{Rows: append(rows, rows[0])}
	if out := f.write(t, w, batch); out.Accepted != 20 || out.Duplicates != 1 {
		t.Fatalf("first write %+v; want 20 accepted, 1 duplicate", out)
	}
	if out := f.write(t, w, batch); out.Accepted != 0 || out.Duplicates != 21 {
		t.Fatalf("retry before shipping %+v; want 21 duplicates", out)
	}
	if v, err := assignments.Pinned(t.Context(), f.db, f.exp, rows[1].UserID); err != nil || v != rows[1].Variant {
		t.Errorf("pin of a spooled exposure: %q, %v; want %q", v, err, rows[1].Variant)
	}
	if n := len(f.inserted(t)); n != 0 {
		t.Fatalf("%d events on ClickHouse before shipping; want 0", n)
	}
	if sp.Backlog() != 20 {
		t.Errorf("backlog %d rows; want 20", sp.Backlog())
	}
	if err := sp.Close(t.Context()); err != nil {
		t.Fatal(err)
	}

	sp = f.open(t, ingest.SpoolOptions{})
	flush(t, sp)
	f.insertedOnce(t, 20)
	w = ingest.NewEngineWriter(f.db, sp, ingest.Options{})
	if out := f.write(t, w, batch); out.Accepted != 0 || out.Duplicates != 21 {
		t.Fatalf("retry after shipping %+v; want 21 duplicates", out)
	}
	if used := f.usage(t); used != 20 {
		t.Errorf("usage %d; want 20", used)
	}
	if sp.Backlog() != 0 {
		t.Errorf("backlog %d rows after the flush; want 0", sp.Backlog())
	}
}

// Scores go through the spool with the write path's rule: a re-send is a
// duplicate whether its first copy is spooled or shipped, a later score
// replaces (accepted, not counted again), and the shipped score of a key
// is the last winner.
func TestSpoolScores(t *testing.T) {
	f := newSpoolFixture(t, clickhousetest.Store(t, true))
	sp := f.open(t, ingest.SpoolOptions{NoShip: true})
	w := ingest.NewEngineWriter(f.db, sp, ingest.Options{})
	model := "m"
	call := ingest.EventRow{OrgID: f.tenant.OrgID, EventID: "call-1", Type: vocab.TypeModelCall, ExperimentID: f.exp,
		UserID: "scored", Variant: resultstest.Arms[0], Ts: f.at, Source: ingest.SourceAPI}
	call.Model = &model
	score := func(v float64, ts time.Time) scores.Row {
		return scores.Row{OrgID: f.tenant.OrgID, CallID: "call-1", Name: "quality", Source: "api", Value: v, Ts: ts}
	}
	first := score(0.5, f.at)
	if out := f.write(t, w, ingest.Batch{Rows: []ingest.EventRow{call}, Scores: []scores.Row{first}}); out.Accepted != 2 {
		t.Fatalf("call and score %+v; want 2 accepted", out)
	}
	if out := f.write(t, w, ingest.Batch{Scores: []scores.Row{first}}); out.Accepted != 0 || out.Duplicates != 1 {
		t.Fatalf("the score again while spooled %+v; want a duplicate", out)
	}
	later := score(0.9, f.at.Add(time.Second))
	if out := f.write(t, w, ingest.Batch{Scores: []scores.Row{later}}); out.Accepted != 1 {
		t.Fatalf("a later score %+v; want accepted", out)
	}
	if err := sp.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	sp = f.open(t, ingest.SpoolOptions{})
	flush(t, sp)
	got, err := f.s.ScoresOfCalls(t.Context(), f.tenant.OrgID, []string{"call-1"})
	if err != nil || len(got["call-1"]) != 1 || got["call-1"][0].Value != 0.9 {
		t.Fatalf("shipped scores %+v, %v; want the later one, 0.9", got, err)
	}
	w = ingest.NewEngineWriter(f.db, sp, ingest.Options{})
	if out := f.write(t, w, ingest.Batch{Scores: []scores.Row{first, later}}); out.Accepted != 0 || out.Duplicates != 2 {
		t.Fatalf("both scores after shipping %+v; want duplicates", out)
	}
	if used := f.usage(t); used != 2 {
		t.Errorf("usage %d; want 2 (the call and its score's key once)", used)
	}
}

// tidwall/wal frames entries by length alone and refuses to open a log
// whose last segment ends in a partial entry; the spool cuts such a tail
// (a write cut short, never acknowledged), drops a last entry whose
// checksum fails, and refuses a log damaged before its last entry.
func TestSpoolTornTail(t *testing.T) {
	f := newSpoolFixture(t, clickhousetest.Store(t, true))
	sp := f.open(t, ingest.SpoolOptions{NoShip: true})
	w := ingest.NewEngineWriter(f.db, sp, ingest.Options{})
	for i := range 3 {
		f.write(t, w, ingest.Batch{Rows: f.exposures(fmt.Sprintf("t%d", i), 5)})
	}
	if err := sp.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	segment := lastSegment(t, filepath.Join(f.dir, "log"))
	whole, err := os.ReadFile(segment)
	if err != nil {
		t.Fatal(err)
	}
	// A length of 128 bytes and one byte of them.
	if err := os.WriteFile(segment, append(whole, 0x80, 0x01, 'x'), 0o600); err != nil {
		t.Fatal(err)
	}
	reopen := func() (*ingest.SpooledEngine, error) {
		return ingest.OpenSpool(f.dir, f.s, ingest.SpoolOptions{NoShip: true})
	}
	sp, err = reopen()
	if err != nil {
		t.Fatalf("open after a partial entry: %v", err)
	}
	if sp.Backlog() != 15 {
		t.Errorf("backlog %d after cutting the partial entry; want 15", sp.Backlog())
	}
	sp.Close(t.Context())

	// The last entry's last byte damaged: its checksum fails.
	damaged, err := os.ReadFile(segment)
	if err != nil {
		t.Fatal(err)
	}
	damaged[len(damaged)-1] ^= 0xff
	if err := os.WriteFile(segment, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	sp, err = reopen()
	if err != nil {
		t.Fatalf("open after a torn last entry: %v", err)
	}
	if sp.Backlog() != 10 {
		t.Errorf("backlog %d after dropping the torn entry; want 10", sp.Backlog())
	}
	sp.Close(t.Context())

	// The first entry damaged: not a torn tail, refused.
	damaged, err = os.ReadFile(segment)
	if err != nil {
		t.Fatal(err)
	}
	damaged[20] ^= 0xff
	if err := os.WriteFile(segment, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	if sp, err := reopen(); err == nil || !strings.Contains(err.Error(), "damaged") {
		if sp != nil {
			sp.Close(t.Context())
		}
		t.Fatalf("open with a damaged first entry: %v; want refused", err)
	}
}

// lastSegment is the path of the log's last segment file.
func lastSegment(t *testing.T, dir string) string {
	t.Helper()
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	last := ""
	for _, n := range names {
		if len(n.Name()) == 20 && n.Name() > last {
			last = n.Name()
		}
	}
	if last == "" {
		t.Fatalf("no segment in %s", dir)
	}
	return filepath.Join(dir, last)
}

// Past MaxBytes of unshipped entries a write fails as unavailable (503,
// retry); once shipped, writes are acknowledged again.
func TestSpoolBacklogBound(t *testing.T) {
	f := newSpoolFixture(t, clickhousetest.Store(t, true))
	sp := f.open(t, ingest.SpoolOptions{NoShip: true, MaxBytes: 1})
	w := ingest.NewEngineWriter(f.db, sp, ingest.Options{})
	f.write(t, w, ingest.Batch{Rows: f.exposures("b0", 5)})
	_, err := w.Write(t.Context(), ingest.Batch{Tenant: f.tenant, Rows: f.exposures("b1", 5)})
	if !ingest.Unavailable(err) || !strings.Contains(err.Error(), "INGEST_SPOOL_MAX_BYTES") {
		t.Fatalf("a write past the bound: %v; want unavailable naming INGEST_SPOOL_MAX_BYTES", err)
	}
	if used := f.usage(t); used != 5 {
		t.Errorf("usage %d after the refused write; want 5", used)
	}
	if err := sp.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	sp = f.open(t, ingest.SpoolOptions{MaxBytes: 1})
	flush(t, sp)
	w = ingest.NewEngineWriter(f.db, sp, ingest.Options{})
	if out := f.write(t, w, ingest.Batch{Rows: f.exposures("b1", 5)}); out.Accepted != 5 {
		t.Fatalf("a write after shipping %+v; want 5 accepted", out)
	}
	flush(t, sp)
	f.insertedOnce(t, 10)
}

// With a shard down the spool goes on acknowledging (its dedup probe
// falls back to the index) and the shipper retries; once the shard is
// back every acknowledged event is stored exactly once.
func TestSpoolAcksWhileAShardIsDown(t *testing.T) {
	c := clickhousetest.StartCluster(t)
	s, _ := c.Store(t)
	f := newSpoolFixture(t, s)
	sp := f.open(t, ingest.SpoolOptions{})
	w := ingest.NewEngineWriter(f.db, sp, ingest.Options{})
	f.write(t, w, ingest.Batch{Rows: f.exposures("up", 10)})
	flush(t, sp)
	c.StopShard(t, 1)
	for i := range 3 {
		if out := f.write(t, w, ingest.Batch{Rows: f.exposures(fmt.Sprintf("down%d", i), 10)}); out.Accepted != 10 {
			t.Fatalf("write %d with a shard down %+v; want 10 accepted", i, out)
		}
	}
	if sp.Backlog() == 0 {
		t.Fatal("nothing spooled with a shard down")
	}
	c.StartShard(t, 1)
	flush(t, sp)
	f.insertedOnce(t, 40)
}

// One process owns a spool directory: a second opener is refused until
// the first closes.
func TestSpoolDirectoryHasOneOwner(t *testing.T) {
	f := newSpoolFixture(t, clickhousetest.Store(t, true))
	sp := f.open(t, ingest.SpoolOptions{NoShip: true})
	if _, err := ingest.OpenSpool(f.dir, f.s, ingest.SpoolOptions{NoShip: true}); err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("a second opener: %v; want refused", err)
	}
	if err := sp.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.open(t, ingest.SpoolOptions{NoShip: true})
}

// An erasure requested while a user's events wait in the spool keeps
// them off ClickHouse: its deletion ran on what was stored, so the
// shipper checks each shipment against the erasures (the tombstones) and
// ships the other users' events alone.
func TestSpoolDoesNotShipEventsOfUsersErasedMeanwhile(t *testing.T) {
	f := newSpoolFixture(t, clickhousetest.Store(t, true))
	ring := testenv.Keyring(t)
	sp := f.open(t, ingest.SpoolOptions{ShipLinger: time.Hour, Erased: ingest.NewErasedFilter(f.db, ring)})
	w := ingest.NewEngineWriter(f.db, sp, ingest.Options{Secrets: ring})
	rows := f.exposures("e", 6)
	if out := f.write(t, w, ingest.Batch{Rows: rows}); out.Accepted != 6 {
		t.Fatalf("write %+v; want 6 accepted", out)
	}
	if _, _, err := erasure.Create(t.Context(), f.db, ring, f.tenant.OrgID, rows[1].UserID, "user_test", time.Now()); err != nil {
		t.Fatal(err)
	}
	flush(t, sp)
	got := f.inserted(t)
	if len(got) != 5 || got[rows[1].EventID] != 0 {
		t.Fatalf("shipped %v; want the 5 events of the users not erased", got)
	}
	if sp.Backlog() != 0 {
		t.Errorf("backlog %d rows; want 0 (the erased user's event is dropped, not kept)", sp.Backlog())
	}
}

// The shipper's first shipment of entries this process acknowledged
// writes them without the claim probe (the acknowledgement's probe
// proved them fresh); a shipment that may have been sent before probes,
// so it stores each event once: a replay at start of entries shipped
// in part before a crash, and a retry after a shipment that failed half
// written (one shard down). SELECTs are counted on a cluster of the
// test's own, which nothing else queries.
func TestSpoolShipperProbesOnlyWhatMayHaveShipped(t *testing.T) {
	c := clickhousetest.StartCluster(t)
	s, _ := c.Store(t)
	f := newSpoolFixture(t, s)
	selects := func() uint64 {
		t.Helper()
		n, err := s.SelectQueries(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// What counting costs by itself: one SELECT a node, counted or not.
	before := selects()
	counting := selects() - before

	// Acknowledged here, shipped for the first time: no probe.
	sp := f.open(t, ingest.SpoolOptions{ShipLinger: time.Hour})
	w := ingest.NewEngineWriter(f.db, sp, ingest.Options{})
	if out := f.write(t, w, ingest.Batch{Rows: f.exposures("first", 20)}); out.Accepted != 20 {
		t.Fatalf("write %+v; want 20 accepted", out)
	}
	before = selects()
	flush(t, sp)
	if n := selects() - before - counting; n != 0 {
		t.Errorf("the first shipment of acknowledged entries ran %d SELECTs; want none (no claim probe)", n)
	}
	f.insertedOnce(t, 20)
	if err := sp.Close(t.Context()); err != nil {
		t.Fatal(err)
	}

	// Replayed: acknowledged, half of it stored as a shipment would
	// before a crash that kept it from cutting them, then the spool opened
	// again. The replay probes, and stores the other half alone.
	sp = f.open(t, ingest.SpoolOptions{NoShip: true})
	w = ingest.NewEngineWriter(f.db, sp, ingest.Options{})
	replayed := f.exposures("replayed", 20)
	if out := f.write(t, w, ingest.Batch{Rows: replayed}); out.Accepted != 20 {
		t.Fatalf("write %+v; want 20 accepted", out)
	}
	if err := sp.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Insert(t.Context(), replayed[:10]); err != nil || n != 10 {
		t.Fatalf("store half before the replay: %d, %v", n, err)
	}
	before = selects()
	sp = f.open(t, ingest.SpoolOptions{ShipLinger: time.Hour})
	flush(t, sp)
	if n := selects() - before - counting; n == 0 {
		t.Error("the replay ran no SELECT; want the claim probe")
	}
	f.insertedOnce(t, 40)

	// Retried: acknowledged with both shards up, then the first shipment
	// fails with shard 2 down after shard 1 has stored its part. The retry
	// probes, and stores shard 2's part alone.
	w = ingest.NewEngineWriter(f.db, sp, ingest.Options{})
	retried := f.exposures("retried", 20)
	if out := f.write(t, w, ingest.Batch{Rows: retried}); out.Accepted != 20 {
		t.Fatalf("write %+v; want 20 accepted", out)
	}
	c.StopShard(t, 1)
	flushed := make(chan error, 1)
	go func() { flushed <- sp.Flush(t.Context()) }()
	for {
		on1, err := s.InsertedIDsOn(t.Context(), 0, f.tenant.OrgID)
		if err != nil {
			t.Fatal(err)
		}
		if storedAny(on1, retried) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.StartShard(t, 1)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	f.insertedOnce(t, 60)
	if used := f.usage(t); used != 60 {
		t.Errorf("usage %d; want 60", used)
	}
}

// storedAny tells whether any of rows is among ids.
func storedAny(ids map[string]int, rows []ingest.EventRow) bool {
	for _, r := range rows {
		if ids[r.EventID] > 0 {
			return true
		}
	}
	return false
}
