package expd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestPriceTableIsTheCanonicalCopy(t *testing.T) {
	canonical, err := os.ReadFile(filepath.Join("..", "prices", "model_prices.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shippedPricesJSON, canonical) {
		t.Fatal("model_prices.json differs from sdk/prices/model_prices.json: run sdk/prices/sync.sh")
	}
}

type priceCase struct {
	What    string          `json:"what"`
	Model   string          `json:"model"`
	Usage   json.RawMessage `json:"usage"`
	CostUSD *float64        `json:"cost_usd"`
}

// TestPriceVectors prices testdata/prices/vectors.json's usages as the
// transport reads them.
func TestPriceVectors(t *testing.T) {
	var v struct {
		Tolerance struct {
			Relative float64 `json:"relative"`
		} `json:"tolerance"`
		Cases         []priceCase      `json:"cases"`
		Overrides     map[string]Price `json:"overrides"`
		OverrideCases []priceCase      `json:"override_cases"`
	}
	readJSON(t, "prices/vectors.json", &v)
	for _, section := range []struct {
		table *priceTable
		cases []priceCase
	}{{newPriceTable(nil, quietLogger()), v.Cases}, {newPriceTable(v.Overrides, quietLogger()), v.OverrideCases}} {
		for _, c := range section.cases {
			acc := &accumulator{}
			acc.observe([]byte(fmt.Sprintf(`{"usage":%s}`, c.Usage)))
			got := section.table.cost(c.Model, acc.input, acc.output)
			switch {
			case c.CostUSD == nil && got != nil:
				t.Errorf("%s: cost %v, want none", c.What, *got)
			case c.CostUSD != nil && (got == nil || math.Abs(*got-*c.CostUSD) > v.Tolerance.Relative*math.Abs(*c.CostUSD)):
				t.Errorf("%s: cost %v, want %v", c.What, got, *c.CostUSD)
			}
		}
	}
}

// lines is a slog handler keeping messages and their model attribute.
type lines struct {
	mu  sync.Mutex
	got []string
}

func (l *lines) Enabled(context.Context, slog.Level) bool { return true }
func (l *lines) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *lines) WithGroup(string) slog.Handler            { return l }
func (l *lines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	l.got = append(l.got, line)
	return nil
}

func TestAnUnknownModelIsLoggedOnce(t *testing.T) {
	l := &lines{}
	table := newPriceTable(nil, slog.New(l))
	in, out := 10, 10
	for range 3 {
		if table.cost("acme-1", &in, &out) != nil {
			t.Fatal("an unknown model has a cost")
		}
	}
	table.cost("acme-2", &in, &out)
	if len(l.got) != 2 || !strings.Contains(l.got[0], "model=acme-1") {
		t.Fatalf("log %q", l.got)
	}
}

// TestTransportPricesTheUsageItReads: the shipped table, client overrides,
// an explicit cost and a per-call price.
func TestTransportPricesTheUsageItReads(t *testing.T) {
	var sc scenarioFile
	readJSON(t, "conformance/scenario.json", &sc)
	srv := newFakeServer(t)
	srv.setConfig(sc.Configs[0])
	c, err := New(Options{APIKey: "pk_test", BaseURL: srv.URL, Logger: quietLogger(),
		ModelPrices: map[string]Price{"acme-1": {Input: 1e-6, Output: 1e-6}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	// Answers in OpenAI's shape, or Anthropic's usage fields for claude models.
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model string }
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(req.Model, "claude") {
			fmt.Fprintf(w, `{"model":%q,"usage":{"input_tokens":5,"output_tokens":3}}`, req.Model)
			return
		}
		fmt.Fprintf(w, `{"model":"%s-2024-08-06","usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}}`, req.Model)
	}))
	t.Cleanup(provider.Close)
	hc := &http.Client{Transport: c.Transport("two-arms", nil)}
	ctx := WithUser(context.Background(), "u1")
	for _, model := range []string{"gpt-4o-mini", "claude-haiku-4-5", "acme-1", "acme-2"} {
		chat(t, hc, ctx, provider.URL, fmt.Sprintf(`{"model":%q}`, model))
	}
	explicit := c.StartModelCall(ctx, "two-arms", "u1")
	explicit.Model, explicit.CostUSD = "gpt-4o", new(float64)
	*explicit.CostUSD = 0.5
	explicit.SetUsage(100, 100, -1)
	explicit.Finish(nil)
	perCall := c.StartModelCall(ctx, "two-arms", "u1")
	perCall.Model, perCall.Price = "gpt-4o", &Price{Input: 1e-9}
	perCall.SetUsage(1000, 50, -1)
	perCall.Finish(nil)
	flushed(t, c)
	want := []any{11*0.15e-6 + 7*0.6e-6, 5e-6 + 3*5e-6, 18e-6, nil, 0.5, 1e-6}
	calls := srv.eventsOf("model_call")
	if len(calls) != len(want) {
		t.Fatalf("%d calls", len(calls))
	}
	for i, e := range calls {
		got, ok := e["cost_usd"].(float64)
		if w, _ := want[i].(float64); ok != (want[i] != nil) || math.Abs(got-w) > 1e-15 {
			t.Errorf("call %d (%v): cost %v, want %v", i, e["model"], e["cost_usd"], want[i])
		}
	}
}
