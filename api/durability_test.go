package api_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/google/uuid"

	"github.com/expd/expd/api"
	"github.com/expd/expd/database"
	"github.com/expd/expd/ingest"
	"github.com/expd/expd/internal/testenv"
)

// cutProxy forwards TCP to the database until cut: then it drops every
// open connection and refuses new ones, as a database that went away.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go p.serve()
	return p
}

func (p *cutProxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			client.Close()
			continue
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		p.conns[client], p.conns[server] = true, true
		p.mu.Unlock()
		go pipe(client, server)
		go pipe(server, client)
	}
}

func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}

func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *cutProxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// proxiedDB opens the schema of db again, through the proxy.
func proxiedDB(t *testing.T, db *gorm.DB, proxyAddr string) *gorm.DB {
	t.Helper()
	var schema string
	if err := db.Raw("SELECT current_schema()").Scan(&schema).Error; err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(os.Getenv("DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	u.Host = proxyAddr
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("connect_timeout", "2")
	u.RawQuery = q.Encode()
	out, err := database.Open(u.String(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s, err := out.DB(); err == nil {
			s.Close()
		}
	})
	return out
}

// cutIngestFixture is an ingest fixture whose writer reaches PostgreSQL
// through a proxy the test can cut; it skips without PostgreSQL.
func cutIngestFixture(t *testing.T, commitTimeout time.Duration) (ingestFixture, *cutProxy) {
	t.Helper()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		t.Skip("needs PostgreSQL (DATABASE_URL): the test cuts the writer's TCP connection")
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startCutProxy(t, u.Host)
	f := newIngestFixture(t, func(d *api.Deps) {
		d.Ingest = ingest.NewWriter(proxiedDB(t, d.DB, proxy.ln.Addr().String()), ingest.Options{CommitTimeout: commitTimeout})
	})
	return f, proxy
}

// TestEventsDurableWhenTheDatabaseGoesAway loads POST /v1/events while the
// writer's database connection is cut and restored: every 202 must be in
// the table, failures must be 503 with Retry-After, and retrying the
// refused batches after recovery stores everything once.
func TestEventsDurableWhenTheDatabaseGoesAway(t *testing.T) {
	f, proxy := cutIngestFixture(t, 3*time.Second)
	type sent struct {
		batch  []map[string]any
		status int
	}
	var (
		mu      sync.Mutex
		results []sent
		stop    atomic.Bool
		wg      sync.WaitGroup
	)
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				batch := make([]map[string]any, 50)
				for j := range batch {
					batch[j] = exposure("exp", fmt.Sprintf("c%d-%d-%d", c, i, j), "control", time.Now())
				}
				r := postEvents(t, f.env, f.org.PublishableKey, batch...)
				if r.Status != 202 {
					p := testenv.ExpectProblem(t, r, 503)
					if p.Code != "storage_unavailable" || r.Header.Get("Retry-After") == "" {
						t.Errorf("503 problem %+v, Retry-After %q", p, r.Header.Get("Retry-After"))
					}
					time.Sleep(50 * time.Millisecond) // a client backs off

				}
				mu.Lock()
				results = append(results, sent{batch, r.Status})
				mu.Unlock()
			}
		}()
	}
	phase := func(d time.Duration) { time.Sleep(d) }
	phase(700 * time.Millisecond)
	proxy.cut() // the database goes away mid-load
	phase(time.Second)
	proxy.restore()
	phase(700 * time.Millisecond)
	for i := 0; i < 5; i++ { // connections die under load, one cut at a time
		proxy.cut()
		proxy.restore()
		phase(150 * time.Millisecond)
	}
	phase(500 * time.Millisecond)
	stop.Store(true)
	wg.Wait()

	var acked, refused []string
	var retry []map[string]any
	for _, r := range results {
		for _, e := range r.batch {
			if r.status == 202 {
				acked = append(acked, e["event_id"].(string))
			} else {
				refused = append(refused, e["event_id"].(string))
				retry = append(retry, e)
			}
		}
	}
	t.Logf("%d requests: %d events acknowledged, %d refused with 503", len(results), len(acked), len(refused))
	if len(refused) == 0 || len(acked) == 0 {
		t.Fatalf("acked %d, refused %d: the cut must show both", len(acked), len(refused))
	}
	// Every acknowledged event is in the table.
	var stored int64
	for start := 0; start < len(acked); start += 1000 {
		var n int64
		if err := f.env.DB.Table("events").Where("org_id = ? AND event_id IN ?", f.org.ID, acked[start:min(start+1000, len(acked))]).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		stored += n
	}
	if stored != int64(len(acked)) {
		t.Fatalf("%d of %d acknowledged events are in the table", stored, len(acked))
	}
	// Retrying the refused batches stores everything exactly once.
	for start := 0; start < len(retry); start += 1000 {
		accepted(t, postEvents(t, f.env, f.org.PublishableKey, retry[start:min(start+1000, len(retry))]...))
	}
	if n := countRows(t, f.env, "org_id = ?", f.org.ID); n != int64(len(acked)+len(refused)) {
		t.Fatalf("%d rows after retries, want %d", n, len(acked)+len(refused))
	}
}

// TestScoresRefusedWhileTheDatabaseIsAway: a score batch that cannot be
// committed is a 503 with Retry-After that says scores (not events) and how
// a retry stays idempotent; the same batch after recovery is stored once.
func TestScoresRefusedWhileTheDatabaseIsAway(t *testing.T) {
	f, proxy := cutIngestFixture(t, 2*time.Second)
	batch := []map[string]any{score(uuid.NewString(), "helpfulness", 0.8, time.Now())}
	proxy.cut()
	r := postScores(t, f.env, f.org.SecretKey, batch...)
	proxy.restore()
	p := testenv.ExpectProblem(t, r, http.StatusServiceUnavailable)
	if p.Code != "storage_unavailable" || r.Header.Get("Retry-After") == "" ||
		!strings.HasPrefix(p.Detail, "scores could not be stored now") || !strings.Contains(p.Detail, "call_id, name and source") {
		t.Fatalf("503 problem %+v, Retry-After %q", p, r.Header.Get("Retry-After"))
	}
	for i := 0; ; i++ { // the writer reconnects on its next commit
		r = postScores(t, f.env, f.org.SecretKey, batch...)
		if r.Status == http.StatusAccepted || i == 20 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r.Status != http.StatusAccepted {
		t.Fatalf("after recovery: %d %s", r.Status, r.Body)
	}
	if got := storedScores(t, f.env, f.org.ID); len(got) != 1 {
		t.Fatalf("%d stored scores, want 1", len(got))
	}
}
