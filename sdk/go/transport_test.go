package expd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fakeProvider answers like the OpenAI API: JSON chat completions, a
// server-sent event stream when "stream" is set, and 429 errors for model "busy".
func fakeProvider(t testing.TB) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		switch {
		case req.Model == "busy":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}`)
		case req.Stream:
			w.Header().Set("Content-Type", "text/event-stream")
			fl := w.(http.Flusher)
			for _, part := range []string{"Hel", "lo"} {
				fmt.Fprintf(w, "data: {\"model\":\"gpt-4o-2024\",\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", part)
				fl.Flush()
				time.Sleep(5 * time.Millisecond)
			}
			io.WriteString(w, "data: {\"model\":\"gpt-4o-2024\",\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":2,\"total_tokens\":9}}\n\ndata: [DONE]\n\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"model":"gpt-4o-2024","choices":[{"message":{"content":"Hello"}}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func readyClient(t *testing.T) (*Client, *fakeServer) { return readyClientWith(t, nil) }

// readyClientWith is readyClient with tune applied to its options.
func readyClientWith(t *testing.T, tune func(*Options)) (*Client, *fakeServer) {
	var sc scenarioFile
	readJSON(t, "conformance/scenario.json", &sc)
	srv := newFakeServer(t)
	srv.setConfig(sc.Configs[0])
	opts := Options{APIKey: "pk_test", BaseURL: srv.URL, FlushInterval: 20 * time.Millisecond, Logger: quietLogger()}
	if tune != nil {
		tune(&opts)
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return c, srv
}

func chat(t *testing.T, hc *http.Client, ctx context.Context, url, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(raw)
}

func TestTransportRecordsAnExposureAndAModelCallPerCall(t *testing.T) {
	c, srv := readyClient(t)
	provider := fakeProvider(t)
	hc := &http.Client{Transport: c.Transport("two-arms", nil)}
	ctx := WithUser(context.Background(), "user-1")
	for range 2 {
		if _, body := chat(t, hc, ctx, provider.URL, `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`); !strings.Contains(body, "Hello") {
			t.Fatalf("answer changed: %s", body)
		}
	}
	chat(t, hc, context.Background(), provider.URL, `{"model":"gpt-4o","messages":[]}`) // no user: not recorded
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls, exposures := srv.eventsOf("model_call"), srv.eventsOf("exposure")
	if len(calls) != 2 || len(exposures) != 2 {
		t.Fatalf("%d model calls, %d exposures; want 2 and 2", len(calls), len(exposures))
	}
	v, _ := c.Assign(context.Background(), "two-arms", "user-1")
	got := calls[0]
	if got["variant"] != v || got["model"] != "gpt-4o-2024" || got["total_tokens"] != 6.0 || got["input_tokens"] != 5.0 ||
		got["response"] != "Hello" || got["error"] != nil || got["prompt"] != `[{"role":"user","content":"hi"}]` {
		t.Fatalf("model_call %v", got)
	}
}

func TestTransportMeasuresStreams(t *testing.T) {
	c, srv := readyClient(t)
	provider := fakeProvider(t)
	hc := &http.Client{Transport: c.Transport("two-arms", nil)}
	_, body := chat(t, hc, WithUser(context.Background(), "user-2"), provider.URL, `{"model":"gpt-4o","stream":true,"messages":[]}`)
	if !strings.Contains(body, `"Hel"`) || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("stream changed: %q", body)
	}
	c.Flush(context.Background())
	calls := srv.eventsOf("model_call")
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	got := calls[0]
	ttft, _ := got["time_to_first_token_ms"].(float64)
	if got["response"] != "Hello" || got["total_tokens"] != 9.0 || got["model"] != "gpt-4o-2024" || ttft <= 0 || ttft > got["latency_ms"].(float64) {
		t.Fatalf("stream call %v", got)
	}
}

func TestTransportRecordsProviderAndTransportErrors(t *testing.T) {
	c, srv := readyClient(t)
	provider := fakeProvider(t)
	hc := &http.Client{Transport: c.Transport("two-arms", nil)}
	ctx := WithUser(context.Background(), "user-3")
	if res, body := chat(t, hc, ctx, provider.URL, `{"model":"busy","messages":[]}`); res.StatusCode != 429 || !strings.Contains(body, "Rate limit") {
		t.Fatalf("error answer changed: %d %s", res.StatusCode, body)
	}
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://127.0.0.1:1/v1/chat/completions", strings.NewReader(`{"model":"m"}`))
	if _, err := hc.Do(req); err == nil {
		t.Fatal("want a transport error")
	}
	c.Flush(context.Background())
	calls := srv.eventsOf("model_call")
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	if calls[0]["error"] != "HTTP 429 rate_limit_error: Rate limit reached" || !strings.Contains(fmt.Sprint(calls[1]["error"]), "connection refused") {
		t.Fatalf("errors: %v / %v", calls[0]["error"], calls[1]["error"])
	}
}

func TestStartModelCallByHand(t *testing.T) {
	c, srv := readyClient(t)
	call := c.StartModelCall(context.Background(), "two-arms", "user-4")
	call.Model = "claude"
	call.SetUsage(10, 5, -1)
	cost := 0.002
	call.CostUSD = &cost
	call.Finish(errors.New("overloaded"))
	call.Finish(nil) // ignored
	c.Flush(context.Background())
	calls := srv.eventsOf("model_call")
	if len(calls) != 1 || calls[0]["total_tokens"] != 15.0 || calls[0]["cost_usd"] != 0.002 || calls[0]["error"] != "overloaded" {
		t.Fatalf("%v", calls)
	}
}

func TestNewNeedsAKey(t *testing.T) {
	t.Setenv(APIKeyEnv, "")
	if _, err := New(Options{BaseURL: "http://127.0.0.1:1"}); !errors.Is(err, ErrMissingAPIKey) {
		t.Fatalf("got %v", err)
	}
	t.Setenv(APIKeyEnv, "pk_env")
	t.Setenv(BaseURLEnv, "http://127.0.0.1:1/")
	c, err := New(Options{Logger: quietLogger()})
	if err != nil || c.opts.APIKey != "pk_env" || c.opts.BaseURL != "http://127.0.0.1:1" {
		t.Fatalf("%v %+v", err, c)
	}
	if v, ok := c.Assign(context.Background(), "x", "u"); ok || v != "" {
		t.Fatal("assign before the config loads must answer false")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	c.Close(ctx)
}

func TestRetriesHonourRetryAfterAndRefusalsDrop(t *testing.T) {
	c, srv := readyClient(t)
	srv.mu.Lock()
	srv.failNext = []int{429, 400}
	srv.mu.Unlock()
	c.Track(context.Background(), "purchase", map[string]any{"experiment_id": "two-arms", "user_id": "u1"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.Flush(ctx)
	srv.mu.Lock()
	posts := append([]time.Time(nil), srv.posts...)
	srv.mu.Unlock()
	if len(posts) != 2 || posts[1].Sub(posts[0]) < 950*time.Millisecond {
		t.Fatalf("posts %v: want a retry at least 1 s (Retry-After) after the 429", posts)
	}
	if c.DroppedEvents() != 1 {
		t.Fatalf("dropped %d, want the 400-refused event", c.DroppedEvents())
	}
}

func TestExposureLogIsPerUTCDay(t *testing.T) {
	l := newExposureLog(3)
	e := &experiment{ID: "e", BucketCount: 1, ranges: NewBucketMap([]Range{{"v", 0, 1}}), prefix: "e.s.", gen: 1}
	day := utcDay(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	steps := []struct {
		user string
		day  int32
		mode exposure
		want bool
	}{{"a", day, exposeNone, false}, {"a", day, exposeDaily, true}, {"a", day, exposeDaily, false}, {"a", day, exposeAlways, true},
		{"a", day, exposeDaily, false}, {"a", day + 1, exposeNone, false}, {"a", day + 1, exposeDaily, true}, {"b", day, exposeDaily, true},
		{"c", day, exposeDaily, true}, {"d", day, exposeDaily, true}, {"a", day + 1, exposeDaily, true}}
	for i, s := range steps {
		if d, ok, got, _ := l.resolve(e, s.user, nil, s.day, s.mode); d.Variant != "v" || !ok || got != s.want {
			t.Fatalf("step %d: got %+v %v %v", i, d, ok, got)
		}
	}
	if len(l.m) != 3 {
		t.Fatalf("%d keys kept, want the bound 3", len(l.m))
	}
	// A new config (gen) recomputes; the same variant on the same day sends
	// nothing, whether Track or Assign recomputes it first.
	e2 := *e
	e2.gen = 2
	if _, _, got, _ := l.resolve(&e2, "d", nil, day, exposeNone); got {
		t.Fatal("Track sent an exposure")
	}
	if _, _, got, _ := l.resolve(&e2, "d", nil, day, exposeDaily); got {
		t.Fatal("same variant, same day, new config: exposure sent again")
	}
	// A new variant is due its exposure, also when Track cached it first.
	e3 := e2
	e3.gen, e3.ranges = 3, NewBucketMap([]Range{{"w", 0, 1}})
	if d, _, got, _ := l.resolve(&e3, "d", nil, day, exposeNone); d.Variant != "w" || got {
		t.Fatalf("Track: variant %q, exposure %v", d.Variant, got)
	}
	if l.m[exposureKey{"e", "d"}].gen != 3 {
		t.Fatal("Track did not cache the variant on the new config")
	}
	if d, _, got, _ := l.resolve(&e3, "d", nil, day, exposeDaily); d.Variant != "w" || !got {
		t.Fatalf("new variant %q: exposure due %v, want true", d.Variant, got)
	}
}

func TestDayClockIsTodayUTC(t *testing.T) {
	c := startDayClock()
	defer c.stop()
	if got, want := c.day.Load(), utcDay(time.Now()); got != want && got != want-1 {
		t.Fatalf("day %d, want %d", got, want)
	}
}
