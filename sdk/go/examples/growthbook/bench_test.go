// Package growthbook compares expd's Go client with GrowthBook's Go SDK
// (github.com/growthbook/growthbook-golang) in one process, on the same
// 50/50 experiment: a module of its own so that the client stays free of
// dependencies. Run: go test -run '^$' -bench . -benchmem (the test checks
// that both SDKs really run the experiment; CI does not run this module).
package growthbook

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	expd "github.com/expd/expd/sdk/go"
	gb "github.com/growthbook/growthbook-golang"
)

const experiment = "two-arms"

var users = func() []string {
	u := make([]string, 1000)
	for i := range u {
		u[i] = fmt.Sprintf("user-%d", i)
	}
	return u
}()

// expdClient serves the conformance scenario's first config (two-arms
// 50/50) from a fake expd and waits until the client has it; every user is
// then assigned once, so the measured calls are warm (exposures queued).
func expdClient(tb testing.TB) *expd.Client {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "testdata", "conformance", "scenario.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var scenario struct{ Configs []json.RawMessage }
	if err := json.Unmarshal(raw, &scenario); err != nil {
		tb.Fatal(err)
	}
	config := scenario.Configs[0]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/config":
			w.Header().Set("ETag", `"1"`)
			w.Write(config)
		default:
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusAccepted)
			w.Write([]byte(`{"accepted":0,"rejected":[],"config_version":1}`))
		}
	}))
	tb.Cleanup(srv.Close)
	c, err := expd.New(expd.Options{APIKey: "pk_bench", BaseURL: srv.URL, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c.Close(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		tb.Fatal(err)
	}
	for _, u := range users {
		c.Assign(ctx, experiment, u)
	}
	return c
}

// The same experiment in GrowthBook's terms: a feature whose one rule is a
// 50/50 experiment hashed on the id attribute, and the inline experiment
// RunExperiment takes.
const features = `{"checkout": {"defaultValue": "control", "rules": [{"key": "two-arms",
	"variations": ["control", "treatment"], "weights": [0.5, 0.5], "hashAttribute": "id"}]}}`

var gbExperiment = &gb.Experiment{Key: experiment, Variations: []gb.FeatureValue{"control", "treatment"}, Weights: []float64{0.5, 0.5}, HashAttribute: "id"}

func gbClient(tb testing.TB) *gb.Client {
	c, err := gb.NewClient(context.Background(), gb.WithJsonFeatures(features), gb.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// gbChildren are per-user child clients built ahead, GrowthBook's warm
// path: a request handler would pay WithAttributes too (BenchmarkGrowthBookWithAttributesEvalFeature).
func gbChildren(tb testing.TB, c *gb.Client) []*gb.Client {
	out := make([]*gb.Client, len(users))
	for i, u := range users {
		child, err := c.WithAttributes(gb.Attributes{"id": u})
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = child
	}
	return out
}

// Both SDKs really run the experiment: each splits the 1,000 users about
// 50/50 (GrowthBook hashes differently, so the users' arms differ).
func TestBothRunTheExperiment(t *testing.T) {
	ctx := context.Background()
	e := expdClient(t)
	children := gbChildren(t, gbClient(t))
	var expdControl, runControl, featureControl int
	for i, u := range users {
		if v, ok := e.Assign(ctx, experiment, u); !ok {
			t.Fatalf("expd: %s not assigned", u)
		} else if v == "control" {
			expdControl++
		}
		res := children[i].RunExperiment(ctx, gbExperiment)
		if !res.InExperiment {
			t.Fatalf("GrowthBook run: %s not in the experiment", u)
		}
		if res.Value == "control" {
			runControl++
		}
		f := children[i].EvalFeature(ctx, "checkout")
		if f.Source != gb.ExperimentResultSource {
			t.Fatalf("GrowthBook feature: %s from %s, not the experiment", u, f.Source)
		}
		if f.Value == "control" {
			featureControl++
		}
	}
	for name, n := range map[string]int{"expd": expdControl, "GrowthBook run": runControl, "GrowthBook feature": featureControl} {
		if n < 430 || n > 570 {
			t.Errorf("%s: %d of 1,000 users in control", name, n)
		}
	}
}

var (
	sink       any
	sinkString string
	sinkDigest [32]byte
)

// Baseline in the same run: SHA-256 of what expd hashes for the same users.
func BenchmarkBaselineSHA256(b *testing.B) {
	inputs := make([][]byte, len(users))
	for i, u := range users {
		inputs[i] = []byte("7f3c2a10-5b1e-4d8a-9c3f-2e6b8d4a1f00.conformance." + u)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkDigest = sha256.Sum256(inputs[i%1000])
	}
}

func BenchmarkExpdAssign(b *testing.B) {
	c := expdClient(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkString, _ = c.Assign(ctx, experiment, users[i%1000])
	}
}

func BenchmarkGrowthBookRunExperiment(b *testing.B) {
	children := gbChildren(b, gbClient(b))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink = children[i%1000].RunExperiment(ctx, gbExperiment).Value
	}
}

func BenchmarkGrowthBookEvalFeature(b *testing.B) {
	children := gbChildren(b, gbClient(b))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink = children[i%1000].EvalFeature(ctx, "checkout").Value
	}
}

func BenchmarkGrowthBookWithAttributesEvalFeature(b *testing.B) {
	c := gbClient(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		child, _ := c.WithAttributes(gb.Attributes{"id": users[i%1000]})
		sink = child.EvalFeature(ctx, "checkout").Value
	}
}

// BenchmarkSideBySide times each call alone, the SDKs taking turns in ten
// rounds, and prints p50 and p99 per call with their ratios to the bare
// SHA-256 and to expd's Assign: on a shared machine a preempted loop makes
// the mean of a -bench run meaningless, while a p50 of single calls holds.
// Run: go test -run '^$' -bench SideBySide
func BenchmarkSideBySide(b *testing.B) {
	ctx := context.Background()
	e := expdClient(b)
	gbc := gbClient(b)
	children := gbChildren(b, gbc)
	inputs := make([][]byte, len(users))
	for i, u := range users {
		inputs[i] = []byte("7f3c2a10-5b1e-4d8a-9c3f-2e6b8d4a1f00.conformance." + u)
	}
	calls := []struct {
		name string
		f    func(i int)
	}{
		{"baseline SHA-256", func(i int) { sinkDigest = sha256.Sum256(inputs[i%1000]) }},
		{"expd Assign", func(i int) { sinkString, _ = e.Assign(ctx, experiment, users[i%1000]) }},
		{"GrowthBook RunExperiment", func(i int) { sink = children[i%1000].RunExperiment(ctx, gbExperiment).Value }},
		{"GrowthBook EvalFeature", func(i int) { sink = children[i%1000].EvalFeature(ctx, "checkout").Value }},
		{"GrowthBook WithAttributes+EvalFeature", func(i int) {
			child, _ := gbc.WithAttributes(gb.Attributes{"id": users[i%1000]})
			sink = child.EvalFeature(ctx, "checkout").Value
		}},
	}
	samples := make([][]time.Duration, len(calls))
	for r := 0; r < 10; r++ {
		for k, c := range calls {
			for i := 0; i < 5_000; i++ {
				t0 := time.Now()
				c.f(i)
				samples[k] = append(samples[k], time.Since(t0))
			}
		}
	}
	q := func(k int, p float64) time.Duration {
		s := samples[k]
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s[int(p*float64(len(s)-1))]
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load average %s\n%-40s %10s %10s %12s %12s\n", strings.TrimSpace(string(load)), "call", "p50", "p99", "p50/SHA-256", "p50/expd")
	for k, c := range calls {
		fmt.Printf("%-40s %10v %10v %12.2f %12.2f\n", c.name, q(k, 0.5), q(k, 0.99), float64(q(k, 0.5))/float64(q(0, 0.5)), float64(q(k, 0.5))/float64(q(1, 0.5)))
	}
}
