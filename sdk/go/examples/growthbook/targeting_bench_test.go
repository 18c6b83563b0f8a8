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

// bench is testdata/targeting/bench.json: the plain experiment, the same
// with a five-condition rule and a layer, the matching attributes, and the
// condition and namespace in GrowthBook's terms (docs/targeting.md,
// "Benchmark").
type bench struct {
	Config     json.RawMessage `json:"config"`
	Attributes map[string]any  `json:"attributes"`
	GrowthBook struct {
		Condition json.RawMessage `json:"condition"`
		Namespace json.RawMessage `json:"namespace"`
	} `json:"growthbook"`
}

func readBench(tb testing.TB) bench {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "testdata", "targeting", "bench.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var b bench
	if err := json.Unmarshal(raw, &b); err != nil {
		tb.Fatal(err)
	}
	return b
}

// targetedClient serves bench.json's config and assigns every user once in
// both experiments (warm).
func targetedClient(tb testing.TB, b bench) *expd.Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/config" {
			w.Header().Set("ETag", `"1"`)
			w.Write(b.Config)
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
		c.AssignWith(ctx, "plain", u, b.Attributes)
		c.AssignWith(ctx, "targeted", u, b.Attributes)
	}
	return c
}

// gbTargeted is the targeted experiment in GrowthBook's terms, as an
// inline experiment and as a feature's rule, with per-user children
// carrying the attributes.
func gbTargeted(tb testing.TB, b bench) (*gb.Experiment, *gb.Client, []*gb.Client) {
	rule := fmt.Sprintf(`{"key": "targeted", "variations": ["control", "treatment"], "weights": [0.5, 0.5], "hashAttribute": "id", "condition": %s, "namespace": %s}`,
		b.GrowthBook.Condition, b.GrowthBook.Namespace)
	var exp gb.Experiment
	if err := json.Unmarshal([]byte(rule), &exp); err != nil {
		tb.Fatal(err)
	}
	c, err := gb.NewClient(context.Background(), gb.WithJsonFeatures(`{"checkout": {"defaultValue": "control", "rules": [`+rule+`]}}`),
		gb.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	children := make([]*gb.Client, len(users))
	for i, u := range users {
		attrs := gb.Attributes{"id": u}
		for k, v := range b.Attributes {
			attrs[k] = v
		}
		if children[i], err = c.WithAttributes(attrs); err != nil {
			tb.Fatal(err)
		}
	}
	return &exp, c, children
}

// Every SDK really evaluates the rule and lets every user in: expd's
// decision is in the experiment for each user, and GrowthBook's
// experiment and feature come from the experiment; each splits about
// 50/50. Without the attributes, nobody is in.
func TestTargetedRunsTheRule(t *testing.T) {
	ctx := context.Background()
	b := readBench(t)
	e := targetedClient(t, b)
	exp, _, children := gbTargeted(t, b)
	counts := map[string]int{}
	for i, u := range users {
		d, ok := e.AssignDetail(expd.WithAttributes(ctx, b.Attributes), "targeted", u)
		if !ok || !d.InExperiment {
			t.Fatalf("expd: %s: %+v", u, d)
		}
		if d, _ := e.AssignDetail(expd.WithAttributes(ctx, map[string]any{"plan": "free"}), "targeted", u); d.ReasonCode != expd.ReasonNotTargeted {
			t.Fatalf("expd without matching attributes: %s: %+v", u, d)
		}
		res := children[i].RunExperiment(ctx, exp)
		f := children[i].EvalFeature(ctx, "checkout")
		if !res.InExperiment || f.Source != gb.ExperimentResultSource {
			t.Fatalf("GrowthBook: %s not in the experiment (%+v, %s)", u, res, f.Source)
		}
		for name, v := range map[string]any{"expd": d.Variant, "run": res.Value, "feature": f.Value} {
			if v == "control" {
				counts[name]++
			}
		}
	}
	for name, n := range counts {
		if n < 430 || n > 570 {
			t.Errorf("%s: %d of 1,000 users in control", name, n)
		}
	}
}

// BenchmarkTargetedSideBySide times single calls, the calls taking turns
// in ten rounds, and prints p50 and p99 with each p50's ratio to expd's
// plain AssignWith (the same call on the experiment without targeting and
// layer). Run: go test -run '^$' -bench TargetedSideBySide
func BenchmarkTargetedSideBySide(b *testing.B) {
	ctx := context.Background()
	bn := readBench(b)
	e := targetedClient(b, bn)
	exp, _, children := gbTargeted(b, bn)
	attrs := bn.Attributes
	inputs := make([][]byte, len(users))
	for i, u := range users {
		inputs[i] = []byte("7f3c2a10-5b1e-4d8a-9c3f-2e6b8d4a1f00.conformance." + u)
	}
	calls := []struct {
		name string
		f    func(i int)
	}{
		{"baseline SHA-256", func(i int) { sinkDigest = sha256.Sum256(inputs[i%1000]) }},
		{"expd AssignWith, no targeting", func(i int) { sinkString, _ = e.AssignWith(ctx, "plain", users[i%1000], attrs) }},
		{"expd AssignWith, 5 conditions + layer", func(i int) { sinkString, _ = e.AssignWith(ctx, "targeted", users[i%1000], attrs) }},
		{"GrowthBook RunExperiment, same", func(i int) { sink = children[i%1000].RunExperiment(ctx, exp).Value }},
		{"GrowthBook EvalFeature, same", func(i int) { sink = children[i%1000].EvalFeature(ctx, "checkout").Value }},
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
	fmt.Printf("load average %s\n%-40s %10s %10s %14s %14s\n", strings.TrimSpace(string(load)), "call", "p50", "p99", "p50/no-target", "p50/targeted")
	for k, c := range calls {
		fmt.Printf("%-40s %10v %10v %14.2f %14.2f\n", c.name, q(k, 0.5), q(k, 0.99), float64(q(k, 0.5))/float64(q(1, 0.5)), float64(q(k, 0.5))/float64(q(2, 0.5)))
	}
}
