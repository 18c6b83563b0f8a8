package expd

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

// benchClient has the conformance scenario's config loaded (configs[idx])
// and no server: its sender queues and never gets to send within the benchmark.
func benchClient(b *testing.B, idx int) *Client {
	var sc scenarioFile
	readJSON(b, "conformance/scenario.json", &sc)
	c, err := New(Options{APIKey: "pk_bench", BaseURL: "http://127.0.0.1:1", FlushInterval: time.Hour, PollInterval: time.Hour, MaxQueueSize: 1 << 30, Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	s, err := parseConfig(sc.Configs[idx], `"x"`)
	if err != nil {
		b.Fatal(err)
	}
	c.poller.stop()
	c.snap.Store(s)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		c.Close(ctx)
	})
	return c
}

var sinkVariant string

func benchAssign(b *testing.B, config int) {
	c := benchClient(b, config)
	users := make([]string, 1000)
	for i := range users {
		users[i] = fmt.Sprintf("user-%d", i)
		c.Assign(context.Background(), "two-arms", users[i]) // warm: today's exposures queued
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkVariant, _ = c.Assign(ctx, "two-arms", users[i%1000])
	}
}

// Assign, warm, 50/50 (goal < 300 ns): users already assigned on this
// config, their exposure for today queued (one map lookup, no hashing).
func BenchmarkAssign(b *testing.B) { benchAssign(b, 0) }

// Assign of a user the client has not seen on this config: hashing, the
// bucket map, the exposure log's insert and the exposure event queued.
func BenchmarkAssignNewUser(b *testing.B) {
	c := benchClient(b, 0)
	users := make([]string, b.N)
	for i := range users {
		users[i] = fmt.Sprintf("new-user-%d", i)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkVariant, _ = c.Assign(ctx, "two-arms", users[i])
	}
}

// Assign, warm, 60/40 with the sticky filter of 300 pinned users.
func BenchmarkAssignSticky(b *testing.B) { benchAssign(b, 1) }

func BenchmarkTrack(b *testing.B) {
	c := benchClient(b, 0)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.Track(ctx, "purchase", map[string]any{"experiment_id": "two-arms", "user_id": "user-1", "value": 1.0})
	}
}

var sinkDigest [32]byte

// Baseline in the same run: SHA-256 of the same input alone.
func BenchmarkBaselineSHA256(b *testing.B) {
	prefix := "7f3c2a10-5b1e-4d8a-9c3f-2e6b8d4a1f00.conformance."
	users := make([]string, 1000)
	for i := range users {
		users[i] = fmt.Sprintf("user-%d", i)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		sinkDigest = digest(prefix, users[i%1000])
	}
}

// BenchmarkCallerWhileServerDown measures what the caller waits for while
// expd is up, refuses connections, or hangs (accepts and never answers):
// three clients in this process on the same config, one per state, their
// senders and pollers running with short intervals so that they keep
// failing and retrying during the measurement. Each call (a warm Assign,
// a Track, a model call through Transport to a local fake provider) is
// timed alone; the states take turns in ten rounds so that load changes hit
// them alike. p50 and p99 are reported against the up client and against
// baselines timed the same way: a bare SHA-256 of the same input (Assign,
// Track) and the same provider call without Transport (model call).
// Run: go test -run '^$' -bench CallerWhileServerDown (prints a table)
func BenchmarkCallerWhileServerDown(b *testing.B) {
	var sc scenarioFile
	readJSON(b, "conformance/scenario.json", &sc)
	up := newFakeServer(b)
	up.setConfig(sc.Configs[0])

	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	refusedURL := "http://" + refused.Addr().String()
	refused.Close()

	hanging, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	held := make(chan net.Conn, 1024)
	go func() {
		for {
			conn, err := hanging.Accept()
			if err != nil {
				return
			}
			held <- conn // never read, never answered
		}
	}()
	b.Cleanup(func() {
		hanging.Close()
		for len(held) > 0 {
			(<-held).Close()
		}
	})

	newClient := func(baseURL string) *Client {
		c, err := New(Options{APIKey: "pk_test", BaseURL: baseURL, PollInterval: time.Second, FlushInterval: 50 * time.Millisecond,
			RetryBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, RequestTimeout: 2 * time.Second, Logger: quietLogger()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			defer cancel()
			c.Close(ctx)
		})
		return c
	}
	states := []string{"up", "refused", "hanging"}
	clients := map[string]*Client{"up": newClient(up.URL), "refused": newClient(refusedURL), "hanging": newClient("http://" + hanging.Addr().String())}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := clients["up"].WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	for _, name := range states[1:] { // the config they loaded before the server went away
		s, err := parseConfig(sc.Configs[0], `"1"`)
		if err != nil {
			b.Fatal(err)
		}
		clients[name].snap.Store(s)
	}

	provider := fakeProvider(b)
	body := `{"model":"gpt-4o","messages":[{"role":"user","content":"Hi"}]}`
	modelCall := func(hc *http.Client, ctx context.Context) {
		req, _ := http.NewRequestWithContext(ctx, "POST", provider.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	bare := &http.Client{}
	measured := map[string]*http.Client{}
	users := make([]string, 1000)
	for i := range users {
		users[i] = fmt.Sprintf("user-%d", i)
	}
	for name, c := range clients {
		measured[name] = &http.Client{Transport: c.Transport("two-arms", nil)}
		for _, u := range users {
			c.Assign(context.Background(), "two-arms", u) // warm
		}
	}

	const rounds, fastN, callN = 5, 4_000, 100 // per round
	samples := map[string][]time.Duration{}
	timeEach := func(key string, n int, f func(i int)) {
		for i := 0; i < n; i++ {
			t0 := time.Now()
			f(i)
			samples[key] = append(samples[key], time.Since(t0))
		}
	}
	prefix := "7f3c2a10-5b1e-4d8a-9c3f-2e6b8d4a1f00.conformance."
	bg := context.Background()
	for r := 0; r < rounds; r++ {
		timeEach("baseline SHA-256", fastN, func(i int) { sinkDigest = digest(prefix, users[i%1000]) })
		timeEach("baseline provider call", callN, func(i int) { modelCall(bare, bg) })
		for _, name := range states {
			c := clients[name]
			timeEach(name+" assign", fastN, func(i int) { sinkVariant, _ = c.Assign(bg, "two-arms", users[i%1000]) })
			timeEach(name+" track", fastN, func(i int) {
				c.Track(bg, "purchase", map[string]any{"experiment_id": "two-arms", "user_id": users[i%1000], "value": 1.0})
			})
			timeEach(name+" model call", callN, func(i int) { modelCall(measured[name], WithUser(bg, users[i%1000])) })
		}
	}
	quantile := func(key string, q float64) time.Duration {
		s := samples[key]
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s[int(q*float64(len(s)-1))]
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load average %s\n", strings.TrimSpace(string(load)))
	hash, call := quantile("baseline SHA-256", 0.5), quantile("baseline provider call", 0.5)
	fmt.Printf("baselines (p50): SHA-256 %v, provider call without Transport %v (p99 %v)\n", hash, call, quantile("baseline provider call", 0.99))
	fmt.Printf("%-20s %10s %10s %12s %12s %10s %10s\n", "state call", "p50", "p99", "p50/base", "p99/base", "p50/up", "p99/up")
	for _, what := range []string{"assign", "track", "model call"} {
		base := hash
		if what == "model call" {
			base = call
		}
		for _, name := range states {
			k, u := name+" "+what, "up "+what
			p50, p99 := quantile(k, 0.5), quantile(k, 0.99)
			fmt.Printf("%-20s %10v %10v %12.2f %12.2f %10.2f %10.2f\n", k, p50, p99, float64(p50)/float64(base), float64(p99)/float64(base),
				float64(p50)/float64(quantile(u, 0.5)), float64(p99)/float64(quantile(u, 0.99)))
		}
	}
	for _, name := range states {
		fmt.Printf("%s client: %d events dropped (queue bound %d)\n", name, clients[name].DroppedEvents(), clients[name].opts.MaxQueueSize)
	}
}

// Score: validation and an enqueue, beside BenchmarkTrack.
func BenchmarkScore(b *testing.B) {
	c := benchClient(b, 0)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.Score(ctx, "5f0c0001-7a1b-4c2d-8e3f-0a1b2c3d4e5f", "thumbs_up", 1)
	}
}

// BenchmarkScoreBesideTrack times single Track and Score calls alone, the
// calls taking turns in rounds (so load changes hit them alike), and
// prints p50 and p99 of each: a loop's mean says little on a loaded
// machine. Run: go test -run xxx -bench ScoreBesideTrack -benchtime 1x
func BenchmarkScoreBesideTrack(b *testing.B) {
	c := benchClient(b, 0)
	ctx := context.Background()
	for i := range 1000 {
		c.Assign(ctx, "two-arms", fmt.Sprintf("user-%d", i))
	}
	payloads := make([]map[string]any, 1000)
	callIDs := make([]string, 1000)
	for i := range payloads {
		payloads[i] = map[string]any{"experiment_id": "two-arms", "user_id": fmt.Sprintf("user-%d", i), "value": 1.0}
		callIDs[i] = fmt.Sprintf("5f0c%04d-7a1b-4c2d-8e3f-0a1b2c3d4e5f", i)
	}
	calls := []struct {
		name string
		fn   func(i int)
	}{
		{"Track (business event)", func(i int) { c.Track(ctx, "conversion", payloads[i%1000]) }},
		{"Score (thumbs_up, human)", func(i int) { c.Score(ctx, callIDs[i%1000], "thumbs_up", 1) }},
		{"Score (rating, comment, time)", func(i int) {
			c.Score(ctx, callIDs[i%1000], "rating", 4, ScoreOptions{Comment: "clear and short", Timestamp: time.Now()})
		}},
	}
	samples := make([][]time.Duration, len(calls))
	for range 10 {
		for k, call := range calls {
			for i := range 5000 {
				if i%10_000 == 0 { // as the sender would: the queue does not grow without bound
					c.sender.mu.Lock()
					c.sender.queue = nil
					c.sender.mu.Unlock()
				}
				t0 := time.Now()
				call.fn(i)
				samples[k] = append(samples[k], time.Since(t0))
			}
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load average %s", load)
	fmt.Printf("%-32s %10s %10s %10s\n", "call", "p50", "p99", "p50/Track")
	q := func(s []time.Duration, p float64) time.Duration {
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s[int(p*float64(len(s)-1))]
	}
	base := q(samples[0], 0.5)
	for k, call := range calls {
		fmt.Printf("%-32s %10v %10v %10.2f\n", call.name, q(samples[k], 0.5), q(samples[k], 0.99), float64(q(samples[k], 0.5))/float64(base))
	}
}
