package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/expd/expd/api"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/plans"
	"github.com/expd/expd/ratelimit"
	"github.com/expd/expd/telemetry"
)

// scrape reads /metrics as Prometheus would.
func scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(telemetry.Handler(func(_ context.Context) error { return nil }))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value is the counter value, or the histogram's count (sum when sum),
// of the series of family name with exactly these label values.
func value(fams map[string]*dto.MetricFamily, name string, sum bool, labels ...string) float64 {
	f, ok := fams[name]
	if !ok {
		return 0
	}
series:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue series
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Histogram != nil && sum:
			return m.Histogram.GetSampleSum()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return 0
}

// A scripted workload moves each counter by exactly what it did: events
// accepted, duplicated and rejected, group commits and their rows, the
// rate-limit refusal, and the HTTP requests by route template and status.
func TestMetricsCountTheWorkloadExactly(t *testing.T) {
	env := testenv.New(t, func(d *api.Deps) {
		d.RateLimits = ratelimit.New(ratelimit.Overrides{plans.Free: {PerSecond: 0.001, Burst: 2}}, nil)
	})
	org := env.NewOrg(t)
	before := scrape(t)

	cfg := map[string]any{
		"name": "exp", "salt": "k3J9x2pQ", "bucket_count": 100,
		"allocation": []map[string]any{{"variant": "control", "weight": 50}, {"variant": "b", "weight": 50}},
		"variants":   map[string]any{"control": map[string]any{"prompt": "a"}, "b": map[string]any{"prompt": "b"}},
		"metrics":    []any{},
	}
	if r := env.Do(t, "POST", "/v1/experiments", cfg, testenv.Bearer(org.AdminToken)...); r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	exposure := func(id string) map[string]any {
		return map[string]any{"event_id": id, "type": "exposure", "experiment_id": "exp", "user_id": "u1",
			"variant": "control", "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "config_version": 1}
	}
	first, second, third := uuid.NewString(), uuid.NewString(), uuid.NewString()
	bad := exposure(uuid.NewString())
	bad["type"] = "nonsense"
	post := func(events ...map[string]any) int {
		return env.Do(t, "POST", "/v1/events", map[string]any{"events": events}, testenv.APIKey(org.PublishableKey)...).Status
	}
	// 2 accepted + 1 rejected; then 1 duplicate + 1 accepted; then refused.
	if s := post(exposure(first), exposure(second), bad); s != http.StatusAccepted {
		t.Fatalf("first batch: %d", s)
	}
	if s := post(exposure(first), exposure(third)); s != http.StatusAccepted {
		t.Fatalf("second batch: %d", s)
	}
	if s := post(exposure(uuid.NewString())); s != http.StatusTooManyRequests {
		t.Fatalf("third batch: %d, want 429 past the burst", s)
	}
	if r := env.Do(t, "GET", "/no/such/route", nil); r.Status != http.StatusNotFound {
		t.Fatalf("unknown route: %d", r.Status)
	}

	after := scrape(t)
	moved := func(name string, sum bool, labels ...string) float64 {
		return value(after, name, sum, labels...) - value(before, name, sum, labels...)
	}
	checks := []struct {
		what      string
		got, want float64
	}{
		{"events accepted", moved("expd_ingest_events_total", false, "outcome", "accepted"), 3},
		{"events duplicate", moved("expd_ingest_events_total", false, "outcome", "duplicate"), 1},
		{"events rejected", moved("expd_ingest_events_total", false, "outcome", "rejected"), 1},
		{"group commits", moved("expd_ingest_group_commit_rows", false), 2},
		{"rows committed", moved("expd_ingest_group_commit_rows", true), 4},
		{"ok commit timings", moved("expd_ingest_group_commit_duration_seconds", false, "outcome", "ok"), 2},
		{"rate-limit refusals (free)", moved("expd_refusals_total", false, "reason", "rate_limit", "plan", "free"), 1},
		{"POST /v1/events 202", moved("expd_http_request_duration_seconds", false, "route", "/v1/events", "method", "POST", "status", "202"), 2},
		{"POST /v1/events 429", moved("expd_http_request_duration_seconds", false, "route", "/v1/events", "method", "POST", "status", "429"), 1},
		{"POST /v1/experiments 201", moved("expd_http_request_duration_seconds", false, "route", "/v1/experiments", "method", "POST", "status", "201"), 1},
		{"unmatched 404", moved("expd_http_request_duration_seconds", false, "route", "unmatched", "method", "GET", "status", "404"), 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s moved by %g, want %g", c.what, c.got, c.want)
		}
	}
	// The SDK routes read their org's snapshot from the config cache: the
	// first read after the experiment change rebuilds it, later ones hit.
	if moved("expd_sdk_config_cache_total", false, "result", "rebuilt") < 1 || moved("expd_sdk_config_cache_total", false, "result", "hit") < 1 {
		t.Errorf("config cache did not count a rebuild and a hit")
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := after[name]; !ok {
			t.Errorf("%s missing from /metrics", name)
		}
	}
	// No label value is an id or caller data.
	for name, f := range after {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if strings.Contains(l.GetValue(), org.ID) || strings.Contains(l.GetValue(), first) || strings.Contains(l.GetValue(), "/no/such") {
					t.Errorf("%s label %s=%q carries request data", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}
