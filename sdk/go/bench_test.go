package expd

import (
	"context"
	"fmt"
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
