package expd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The shared vectors (testdata/bucketing/vectors.json) and the conformance
// scenario (testdata/conformance/scenario.json), read from the repository.

type vectorFile struct {
	BucketCases []struct {
		ExperimentID string `json:"experiment_id"`
		Salt         string `json:"salt"`
		BucketCount  uint32 `json:"bucket_count"`
		UserID       string `json:"user_id"`
		Bucket       uint32 `json:"bucket"`
	} `json:"bucket_cases"`
	LookupCases []struct {
		Map     []Range `json:"map"`
		Bucket  uint32  `json:"bucket"`
		Variant *string `json:"variant"`
	} `json:"lookup_cases"`
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}

func TestVectors(t *testing.T) {
	var f vectorFile
	readJSON(t, "bucketing/vectors.json", &f)
	if len(f.BucketCases) < 1000 || len(f.LookupCases) < 100 {
		t.Fatalf("too few cases: %d, %d", len(f.BucketCases), len(f.LookupCases))
	}
	for _, c := range f.BucketCases {
		if got := Bucket(c.ExperimentID, c.Salt, c.UserID, c.BucketCount); got != c.Bucket {
			t.Fatalf("%+v: got %d", c, got)
		}
	}
	for _, c := range f.LookupCases {
		got, ok := NewBucketMap(c.Map).Lookup(c.Bucket)
		if (c.Variant == nil) != !ok || (ok && got != *c.Variant) {
			t.Fatalf("%+v: got %q %v", c, got, ok)
		}
	}
}

type scenarioStep struct {
	Op         string         `json:"op"`
	Config     *int           `json:"config"`
	Experiment string         `json:"experiment"`
	From       *int           `json:"from"`
	To         *int           `json:"to"`
	Version    int64          `json:"version"`
	Type       string         `json:"type"`
	Count      *int           `json:"count"`
	Event      string         `json:"event"`
	Payload    map[string]any `json:"payload"`
	Expect     map[string]any `json:"expect"`
}

type scenarioFile struct {
	UserPrefix string            `json:"user_prefix"`
	Configs    []json.RawMessage `json:"configs"`
	Expected   map[string]struct {
		Variants []string `json:"variants"`
		ByConfig []string `json:"by_config"`
	} `json:"expected"`
	StickyCases []struct {
		ExperimentID string   `json:"experiment_id"`
		Salt         string   `json:"salt"`
		BucketCount  uint32   `json:"bucket_count"`
		Map          []Range  `json:"map"`
		Sticky       *Sticky  `json:"sticky"`
		Users        []string `json:"users"`
		Variants     []string `json:"variants"`
	} `json:"sticky_cases"`
	Decisions struct {
		Configs []json.RawMessage `json:"configs"`
		Cases   []struct {
			Config       int            `json:"config"`
			Experiment   string         `json:"experiment"`
			UserID       string         `json:"user_id"`
			Attributes   map[string]any `json:"attributes"`
			Variant      string         `json:"variant"`
			InExperiment bool           `json:"in_experiment"`
			ReasonCode   ReasonCode     `json:"reason_code"`
			// HoldoutExposures: recorded once per (holdout, user).
			HoldoutExposures []struct {
				HoldoutID string `json:"holdout_id"`
				Variant   string `json:"variant"`
			} `json:"holdout_exposures"`
		} `json:"cases"`
	} `json:"decisions"`
	Steps []scenarioStep `json:"steps"`
}

// The shared decision cases through AssignDetail on a client whose fake
// server serves each case's config.
func TestDecisionCases(t *testing.T) {
	var sc scenarioFile
	readJSON(t, "conformance/scenario.json", &sc)
	if len(sc.Decisions.Cases) == 0 {
		t.Fatal("no decision cases")
	}
	ctx := context.Background()
	clients := make([]*Client, len(sc.Decisions.Configs))
	servers := make([]*fakeServer, len(sc.Decisions.Configs))
	for i, raw := range sc.Decisions.Configs {
		srv := newFakeServer(t)
		servers[i] = srv
		srv.setConfig(raw)
		c, err := New(Options{APIKey: "pk_test", BaseURL: srv.URL, FlushInterval: time.Hour, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		if err := c.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
		clients[i] = c
	}
	for _, dc := range sc.Decisions.Cases {
		got, ok := clients[dc.Config].AssignDetail(WithAttributes(ctx, dc.Attributes), dc.Experiment, dc.UserID)
		want := Decision{Variant: dc.Variant, InExperiment: dc.InExperiment, ReasonCode: dc.ReasonCode}
		if !ok || got != want {
			t.Errorf("%s %s: AssignDetail = %+v, %v; want %+v", dc.Experiment, dc.UserID, got, ok, want)
		}
	}
	// The holdout exposures: once per (holdout, user) of each client.
	for i, c := range clients {
		want := map[[3]string]bool{}
		holdouts := map[string]bool{}
		for _, dc := range sc.Decisions.Cases {
			for _, h := range dc.HoldoutExposures {
				if dc.Config == i {
					want[[3]string{h.HoldoutID, dc.UserID, h.Variant}] = true
					holdouts[h.HoldoutID] = true
				}
			}
		}
		if err := c.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		got := map[[3]string]bool{}
		n := 0
		for _, ev := range servers[i].eventsOf(EventExposure) {
			if id, _ := ev["experiment_id"].(string); holdouts[id] {
				n++
				got[[3]string{id, ev["user_id"].(string), ev["variant"].(string)}] = true
			}
		}
		if n != len(want) || !maps.Equal(got, want) {
			t.Errorf("config %d: %d holdout exposures %v; want once each of %v", i, n, got, want)
		}
	}
}

func TestStickyCases(t *testing.T) {
	var sc scenarioFile
	readJSON(t, "conformance/scenario.json", &sc)
	if len(sc.StickyCases) == 0 {
		t.Fatal("no sticky cases")
	}
	for _, c := range sc.StickyCases {
		e := &experiment{ID: c.ExperimentID, Salt: c.Salt, BucketCount: c.BucketCount, ranges: NewBucketMap(c.Map), Sticky: c.Sticky, prefix: c.ExperimentID + "." + c.Salt + "."}
		for i, u := range c.Users {
			if got, _ := e.decide(u, nil); got.Variant != c.Variants[i] {
				t.Fatalf("%s %s: got %s, want %s", c.ExperimentID, u, got.Variant, c.Variants[i])
			}
		}
	}
}

// fakeServer is a fake expd: config with ETags, events stored, failure switches.
type fakeServer struct {
	*httptest.Server
	mu          sync.Mutex
	config      []byte
	version     int64
	ackVersion  int64
	down        bool
	failNext    []int
	events      []map[string]any
	posts       []time.Time
	scoreBodies []map[string]any // every POST /v1/scores body, as it arrived
	scoreKeys   []string         // the X-API-Key of each
	failScores  []int            // statuses for the next score posts
	notMod      int
}

func newFakeServer(t testing.TB) *fakeServer {
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) setConfig(raw []byte) {
	var v struct {
		ConfigVersion int64 `json:"config_version"`
	}
	_ = json.Unmarshal(raw, &v)
	f.mu.Lock()
	f.config, f.version = raw, v.ConfigVersion
	f.mu.Unlock()
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Header.Get("X-API-Key") != "pk_test" {
		w.WriteHeader(401)
		return
	}
	if f.down {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(503)
		return
	}
	switch {
	case r.Method == "GET" && r.URL.Path == "/v1/config":
		etag := fmt.Sprintf(`"%d"`, f.version)
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			f.notMod++
			w.WriteHeader(304)
			return
		}
		w.Write(f.config)
	case r.Method == "POST" && r.URL.Path == "/v1/events":
		f.posts = append(f.posts, time.Now())
		if len(f.failNext) > 0 {
			status := f.failNext[0]
			f.failNext = f.failNext[1:]
			if status == 429 {
				w.Header().Set("Retry-After", "1")
			}
			w.WriteHeader(status)
			return
		}
		var env struct {
			Events []map[string]any `json:"events"`
		}
		if err := json.Unmarshal(body, &env); err != nil {
			w.WriteHeader(400)
			return
		}
		f.events = append(f.events, env.Events...)
		ack := f.ackVersion
		if ack == 0 {
			ack = f.version
		}
		w.WriteHeader(202)
		json.NewEncoder(w).Encode(map[string]any{"accepted": len(env.Events), "rejected": []any{}, "config_version": ack})
	case r.Method == "POST" && r.URL.Path == "/v1/scores":
		if len(f.failScores) > 0 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(f.failScores[0])
			f.failScores = f.failScores[1:]
			return
		}
		var env map[string]any
		if err := json.Unmarshal(body, &env); err != nil {
			w.WriteHeader(400)
			return
		}
		f.scoreBodies = append(f.scoreBodies, env)
		f.scoreKeys = append(f.scoreKeys, r.Header.Get("X-API-Key"))
		w.WriteHeader(202)
		json.NewEncoder(w).Encode(map[string]any{"accepted": len(env["scores"].([]any)), "rejected": []any{}, "config_version": f.version})
	default:
		w.WriteHeader(404)
	}
}

// scores is every score that arrived, in order.
func (f *fakeServer) scores() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, b := range f.scoreBodies {
		for _, s := range b["scores"].([]any) {
			out = append(out, s.(map[string]any))
		}
	}
	return out
}

func (f *fakeServer) eventsOf(typ string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, e := range f.events {
		if e["type"] == typ {
			out = append(out, e)
		}
	}
	return out
}

func eventually(t *testing.T, what string, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestConformanceScenario(t *testing.T) {
	var sc scenarioFile
	readJSON(t, "conformance/scenario.json", &sc)
	srv := newFakeServer(t)
	spillPath := filepath.Join(t.TempDir(), "spill.jsonl")
	ctx := context.Background()
	var c *Client
	seen := map[string]int{}
	var spilled []map[string]any
	var worst time.Duration
	user := func(i int) string { return fmt.Sprintf("%s%d", sc.UserPrefix, i) }
	want := func(exp string, config, i int) string {
		e := sc.Expected[exp]
		return e.Variants[e.ByConfig[config][i]-'0']
	}
	fresh := func(typ string) []map[string]any {
		all := srv.eventsOf(typ)
		out := all[seen[typ]:]
		seen[typ] = len(all)
		return out
	}
	defer func() {
		if c != nil {
			c.Close(ctx)
		}
	}()
	for _, st := range sc.Steps {
		where := fmt.Sprintf("%s %s", st.Op, st.Experiment)
		switch st.Op {
		case "serve_config":
			srv.setConfig(sc.Configs[*st.Config])
		case "start_client":
			var err error
			c, err = New(Options{APIKey: "pk_test", BaseURL: srv.URL, SpillPath: spillPath, FlushInterval: 50 * time.Millisecond,
				MaxRetries: 1, RetryBackoff: 10 * time.Millisecond, MaxQueueSize: 100_000, Logger: quietLogger()})
			if err != nil {
				t.Fatal(err)
			}
		case "wait_config_version":
			eventually(t, where, func() bool { return c.ConfigVersion() == st.Version })
		case "assign":
			for i := *st.From; i < *st.To; i++ {
				if got, _ := c.Assign(ctx, st.Experiment, user(i)); got != want(st.Experiment, *st.Config, i) {
					t.Fatalf("%s: user %d got %q, want %q", where, i, got, want(st.Experiment, *st.Config, i))
				}
			}
		case "get_prompt":
			for i := *st.From; i < *st.To; i++ {
				v := want(st.Experiment, *st.Config, i)
				p := c.GetPrompt(ctx, st.Experiment, user(i), "default")
				if p.Variant != v || p.Fallback || p.Text != "You are the "+v+" assistant." {
					t.Fatalf("%s: user %d: %+v", where, i, p)
				}
				vars := c.GetVariables(ctx, st.Experiment, user(i), map[string]any{"arm": "none", "other": 1})
				if vars["arm"] != v || vars["other"] != 1 {
					t.Fatalf("%s: variables %v", where, vars)
				}
			}
		case "flush":
			fctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			if err := c.Flush(fctx); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			cancel()
		case "expect_events":
			got := fresh(st.Type)
			if len(got) != *st.Count {
				t.Fatalf("%s %s: %d events, want %d", where, st.Type, len(got), *st.Count)
			}
			if st.Expect["same_as_spilled"] == true {
				key := func(es []map[string]any) string {
					var out []string
					for _, e := range es {
						out = append(out, fmt.Sprint(e["event_id"], " ", e["timestamp"]))
					}
					sort.Strings(out)
					return strings.Join(out, ",")
				}
				if key(got) != key(spilled) {
					t.Fatalf("%s: replayed events differ from the spilled ones", where)
				}
			}
		case "ack_config_version":
			srv.mu.Lock()
			srv.ackVersion = st.Version
			srv.mu.Unlock()
		case "track":
			if !c.Track(ctx, st.Event, st.Payload) {
				t.Fatalf("%s: dropped", where)
			}
			c.Flush(ctx)
			typ := st.Expect["type"].(string)
			all := srv.eventsOf(typ)
			last := all[len(all)-1]
			for k, v := range st.Expect {
				if fmt.Sprint(last[k]) != fmt.Sprint(v) {
					t.Fatalf("%s: field %s = %v, want %v", where, k, last[k], v)
				}
			}
			if v, _ := c.Assign(ctx, st.Payload["experiment_id"].(string), st.Payload["user_id"].(string)); last["variant"] != v {
				t.Fatalf("%s: variant %v, assign says %s", where, last["variant"], v)
			}
		case "server_down", "server_up":
			srv.mu.Lock()
			srv.down = st.Op == "server_down"
			srv.mu.Unlock()
		case "track_many":
			for i := *st.From; i < *st.To; i++ {
				t0 := time.Now()
				if !c.Track(ctx, st.Event, map[string]any{"experiment_id": st.Experiment, "user_id": user(i), "value": 1}) {
					t.Fatalf("%s: dropped", where)
				}
				worst = max(worst, time.Since(t0))
			}
		case "close_client":
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			c.Close(cctx)
			cancel()
		case "expect_spilled":
			raw, err := os.ReadFile(spillPath)
			if err != nil {
				t.Fatal(err)
			}
			spilled = nil
			for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
				var e map[string]any
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Fatal(err)
				}
				spilled = append(spilled, e)
			}
			if len(spilled) != *st.Count {
				t.Fatalf("%s: %d spilled", where, len(spilled))
			}
		default:
			t.Fatalf("unknown op %s", st.Op)
		}
	}
	t.Logf("slowest track while the server was down: %v", worst)
}
