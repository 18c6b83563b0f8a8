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

// readTestdata decodes a file of the repository's testdata directory.
func readTestdata(tb testing.TB, name string, v any) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		tb.Fatal(err)
	}
}

// newExpd serves config from a fake expd, waits until the client has it
// and assigns every user once in each of experiments (with attrs), so the
// measured calls are warm (exposures queued).
func newExpd(tb testing.TB, config json.RawMessage, attrs map[string]any, experiments ...string) *expd.Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/config" {
			w.Header().Set("ETag", `"1"`)
			w.Write(config)
			return
		}
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
		w.Write([]byte(`{"accepted":0,"rejected":[],"config_version":1}`))
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
		for _, e := range experiments {
			c.AssignWith(ctx, e, u, attrs)
		}
	}
	return c
}

// expdClient serves the conformance scenario's first config (two-arms
// 50/50).
func expdClient(tb testing.TB) *expd.Client {
	var scenario struct{ Configs []json.RawMessage }
	readTestdata(tb, filepath.Join("conformance", "scenario.json"), &scenario)
	return newExpd(tb, scenario.Configs[0], nil, experiment)
}

// The same experiment in GrowthBook's terms: a feature whose one rule is a
// 50/50 experiment hashed on the id attribute, and the inline experiment
// RunExperiment takes.
const twoArmsRule = `{"key": "two-arms", "variations": ["control", "treatment"], "weights": [0.5, 0.5], "hashAttribute": "id"}`

var gbExperiment = &gb.Experiment{Key: experiment, Variations: []gb.FeatureValue{"control", "treatment"}, Weights: []float64{0.5, 0.5}, HashAttribute: "id"}

// gbClient is a GrowthBook client whose feature "checkout" has rule as its
// one rule.
func gbClient(tb testing.TB, rule string) *gb.Client {
	c, err := gb.NewClient(context.Background(), gb.WithJsonFeatures(`{"checkout": {"defaultValue": "control", "rules": [`+rule+`]}}`),
		gb.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// gbChildren are per-user child clients (id and attrs) built ahead,
// GrowthBook's warm path: a request handler would pay WithAttributes too
// (BenchmarkGrowthBookWithAttributesEvalFeature).
func gbChildren(tb testing.TB, c *gb.Client, attrs map[string]any) []*gb.Client {
	out := make([]*gb.Client, len(users))
	for i, u := range users {
		a := gb.Attributes{"id": u}
		for k, v := range attrs {
			a[k] = v
		}
		child, err := c.WithAttributes(a)
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
	children := gbChildren(t, gbClient(t, twoArmsRule), nil)
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

// sha256Baseline is the SHA-256 of what expd hashes for each user in the
// two-arms experiment: a baseline measured in the same run.
func sha256Baseline() call {
	inputs := make([][]byte, len(users))
	for i, u := range users {
		inputs[i] = []byte("7f3c2a10-5b1e-4d8a-9c3f-2e6b8d4a1f00.conformance." + u)
	}
	return call{"baseline SHA-256", func(i int) { sinkDigest = sha256.Sum256(inputs[i%1000]) }}
}

func BenchmarkBaselineSHA256(b *testing.B) {
	f := sha256Baseline().f
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f(i)
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
	children := gbChildren(b, gbClient(b, twoArmsRule), nil)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink = children[i%1000].RunExperiment(ctx, gbExperiment).Value
	}
}

func BenchmarkGrowthBookEvalFeature(b *testing.B) {
	children := gbChildren(b, gbClient(b, twoArmsRule), nil)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink = children[i%1000].EvalFeature(ctx, "checkout").Value
	}
}

func BenchmarkGrowthBookWithAttributesEvalFeature(b *testing.B) {
	c := gbClient(b, twoArmsRule)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		child, _ := c.WithAttributes(gb.Attributes{"id": users[i%1000]})
		sink = child.EvalFeature(ctx, "checkout").Value
	}
}

// call is one call a side-by-side benchmark times, on user i%1000.
type call struct {
	name string
	f    func(i int)
}

// ratioTo is a column of sideBySide: each p50 over the p50 of calls[k].
type ratioTo struct {
	label string
	k     int
}

// sideBySide times each call alone, the calls taking turns in ten rounds,
// and prints p50 and p99 per call with each p50's ratios: on a shared
// machine a preempted loop makes the mean of a -bench run meaningless,
// while a p50 of single calls holds.
func sideBySide(calls []call, ratios ...ratioTo) {
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
	fmt.Printf("load average %s\n%-40s %10s %10s", strings.TrimSpace(string(load)), "call", "p50", "p99")
	for _, r := range ratios {
		fmt.Printf(" %14s", "p50/"+r.label)
	}
	fmt.Println()
	for k, c := range calls {
		fmt.Printf("%-40s %10v %10v", c.name, q(k, 0.5), q(k, 0.99))
		for _, r := range ratios {
			fmt.Printf(" %14.2f", float64(q(k, 0.5))/float64(q(r.k, 0.5)))
		}
		fmt.Println()
	}
}

// BenchmarkSideBySide compares the two-arms experiment's calls with the
// bare SHA-256 and with expd's Assign. Run: go test -run '^$' -bench SideBySide
func BenchmarkSideBySide(b *testing.B) {
	ctx := context.Background()
	e := expdClient(b)
	gbc := gbClient(b, twoArmsRule)
	children := gbChildren(b, gbc, nil)
	sideBySide([]call{
		sha256Baseline(),
		{"expd Assign", func(i int) { sinkString, _ = e.Assign(ctx, experiment, users[i%1000]) }},
		{"GrowthBook RunExperiment", func(i int) { sink = children[i%1000].RunExperiment(ctx, gbExperiment).Value }},
		{"GrowthBook EvalFeature", func(i int) { sink = children[i%1000].EvalFeature(ctx, "checkout").Value }},
		{"GrowthBook WithAttributes+EvalFeature", func(i int) {
			child, _ := gbc.WithAttributes(gb.Attributes{"id": users[i%1000]})
			sink = child.EvalFeature(ctx, "checkout").Value
		}},
	}, ratioTo{"SHA-256", 0}, ratioTo{"expd", 1})
}
