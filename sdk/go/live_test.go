package expd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/expd/expd/sdk/go/internal/expddev"
)

// expdDev is a real `expd dev` built from this checkout (internal/expddev).
type expdDev struct{ *expddev.Dev }

var (
	devOnce sync.Once
	dev     *expdDev
	devErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if dev != nil {
		dev.Stop()
	}
	os.Exit(code)
}

func startDev(t *testing.T) *expdDev {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no expd dev")
	}
	devOnce.Do(func() {
		bin, err := expddev.Build(filepath.Join("..", ".."))
		if err != nil {
			devErr = err
			return
		}
		d, err := expddev.Start(bin)
		dev, devErr = &expdDev{d}, err
	})
	if devErr != nil {
		t.Fatal(devErr)
	}
	return dev
}

func (d *expdDev) call(t *testing.T, method, path string, body any, jwt bool, want int, out any) {
	t.Helper()
	status, raw, err := d.Call(method, path, body, jwt)
	if err != nil {
		t.Fatal(err)
	}
	if status != want {
		t.Fatalf("%s %s: %d %s", method, path, status, raw)
	}
	if out != nil {
		json.Unmarshal(raw, out)
	}
}

var experimentConfig = expddev.ExperimentConfig

func (d *expdDev) serverAssign(t *testing.T, ref string, users []string) []string {
	t.Helper()
	answers, err := d.AssignAll(ref, users)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(answers))
	for i, a := range answers {
		out[i] = a.Variant
	}
	return out
}

func liveClient(t *testing.T, d *expdDev, exp string) *Client {
	c, err := New(Options{APIKey: d.APIKey, BaseURL: d.BaseURL, PollInterval: 500 * time.Millisecond, FlushInterval: 50 * time.Millisecond, MaxQueueSize: 100_000, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	eventually(t, "config", func() bool { _, ok := c.Assign(context.Background(), exp, "x"); return ok })
	return c
}

func users(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("user-%d", i))
	}
	return out
}

func TestLiveAssignEqualsServerFor2000Users(t *testing.T) {
	d := startDev(t)
	var exp struct{ ID string }
	d.call(t, "POST", "/v1/experiments", experimentConfig("go-agree", "control", 34, "short", 33, "long", 33), true, 201, &exp)
	c := liveClient(t, d, "go-agree")
	us := users(0, 2000)
	server := d.serverAssign(t, "go-agree", us)
	ctx := context.Background()
	for i, u := range us {
		byName, _ := c.Assign(ctx, "go-agree", u)
		byID, _ := c.Assign(ctx, exp.ID, u)
		if byName != server[i] || byID != server[i] {
			t.Fatalf("%s: by name %s, by id %s, server %s", u, byName, byID, server[i])
		}
	}
}

func TestLiveWeightChangeKeepsAssignedUsers(t *testing.T) {
	d := startDev(t)
	d.call(t, "POST", "/v1/experiments", experimentConfig("go-sticky", "control", 50, "treatment", 50), true, 201, nil)
	c := liveClient(t, d, "go-sticky")
	ctx := context.Background()
	early := users(0, 3000)
	before := make([]string, len(early))
	for i, u := range early {
		before[i], _ = c.Assign(ctx, "go-sticky", u)
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Flush(fctx); err != nil { // the exposures pin the 3,000 on the server
		t.Fatal(err)
	}
	for i, v := range d.serverAssign(t, "go-sticky", early) {
		if v != before[i] {
			t.Fatalf("before the change, %s: client %s, server %s", early[i], before[i], v)
		}
	}
	var changed struct {
		ConfigVersion int64 `json:"config_version"`
	}
	d.call(t, "PUT", "/v1/experiments/go-sticky", experimentConfig("go-sticky", "control", 60, "treatment", 40), true, 200, &changed)
	eventually(t, "new config", func() bool { return c.ConfigVersion() >= changed.ConfigVersion })
	all := users(0, 10000)
	server := d.serverAssign(t, "go-sticky", all)
	control := 0
	for i, u := range all {
		v, _ := c.Assign(ctx, "go-sticky", u)
		if v != server[i] {
			t.Fatalf("%s: client %s, server %s", u, v, server[i])
		}
		if i < 3000 && v != before[i] {
			t.Fatalf("%s moved %s -> %s", u, before[i], v)
		}
		if i >= 3000 && v == "control" {
			control++
		}
	}
	// The split of new users is a property of the served map and the hash:
	// measured on 100,000 more new users (computed locally, no exposures),
	// so 1.5 % is ten standard errors and the check cannot flake as the
	// 7,000 above would (about 2.6 standard errors).
	exp := c.find("go-sticky")
	for i := range 100_000 {
		if d, _ := exp.decide(fmt.Sprintf("fresh-%d", i), nil); d.Variant == "control" {
			control++
		}
	}
	if share := float64(control) / 107_000; share < 0.585 || share > 0.615 {
		t.Fatalf("new users' control share %.4f", share)
	}
}

func TestLiveEventsAreStoredAsSent(t *testing.T) {
	d := startDev(t)
	var exp struct{ ID string }
	d.call(t, "POST", "/v1/experiments", experimentConfig("go-events", "control", 50, "treatment", 50), true, 201, &exp)
	c := liveClient(t, d, "go-events")
	ctx := context.Background()
	v, _ := c.Assign(ctx, "go-events", "tracker")
	c.Track(ctx, "conversion", map[string]any{"experiment_id": "go-events", "user_id": "tracker", "value": 2.5})
	provider := fakeProvider(t)
	hc := &http.Client{Transport: c.Transport("go-events", nil)}
	chat(t, hc, WithUser(ctx, "tracker"), provider.URL, `{"model":"gpt-4o","messages":[]}`)
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Flush(fctx); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Events []map[string]any `json:"events"`
	}
	d.call(t, "GET", "/v1/experiments/"+exp.ID+"/events?"+url.Values{"user_id": {"tracker"}, "limit": {"100"}}.Encode(), nil, true, 200, &got)
	var kinds []string
	for _, e := range got.Events {
		kinds = append(kinds, e["type"].(string))
		if e["variant"] != v || e["experiment_id"] != exp.ID {
			t.Fatalf("event %v", e)
		}
		if e["type"] == "model_call" && (e["model"] != "gpt-4o-2024" || e["total_tokens"] != 6.0 || e["response"] != "Hello") {
			t.Fatalf("model_call %v", e)
		}
	}
	if s := strings.Join(sortStrings(kinds), ","); s != "business_event,exposure,exposure,model_call" {
		t.Fatalf("stored kinds %s", s)
	}
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// scoreAnswers records the answers to the client's own POST /v1/scores.
type scoreAnswers struct {
	mu      sync.Mutex
	answers []string // "<status> <body>"
}

func (s *scoreAnswers) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.URL.Path != "/v1/scores" {
		return res, err
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(raw))
	s.mu.Lock()
	s.answers = append(s.answers, fmt.Sprintf("%d %s", res.StatusCode, bytes.TrimSpace(raw)))
	s.mu.Unlock()
	return res, nil
}

func TestLiveCallIDIsStoredAndScoresAreAccepted(t *testing.T) {
	d := startDev(t)
	var exp struct{ ID string }
	d.call(t, "POST", "/v1/experiments", experimentConfig("go-scores", "control", 50, "treatment", 50), true, 201, &exp)
	answers := &scoreAnswers{}
	c, err := New(Options{APIKey: d.APIKey, BaseURL: d.BaseURL, FlushInterval: 50 * time.Millisecond, Logger: quietLogger(),
		HTTPClient: &http.Client{Transport: answers, Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	ctx := WithUser(context.Background(), "rater")
	eventually(t, "config", func() bool { _, ok := c.Assign(ctx, "go-scores", "x"); return ok })
	provider := fakeProvider(t) // gpt-4o-2024, 5 prompt and 1 completion tokens
	res, _ := chat(t, &http.Client{Transport: c.Transport("go-scores", nil)}, ctx, provider.URL, `{"model":"gpt-4o","messages":[]}`)
	callID, _ := LastCallID(ctx)
	if callID == "" || res.Header.Get(CallIDHeader) != callID {
		t.Fatalf("LastCallID %q, header %q", callID, res.Header.Get(CallIDHeader))
	}
	ok := c.Score(ctx, callID, "thumbs_up", 1) &&
		c.Score(ctx, callID, "rating", 4, ScoreOptions{Comment: "clear", Evaluator: "in-app", EvaluatorVersion: "2"}) &&
		c.Score(ctx, "call-not-yet-arrived", "thumbs_up", 0) // an orphan is accepted too
	if !ok || c.Score(ctx, callID, "helpfulness", 0.5, ScoreOptions{Source: SourceJudge}) {
		t.Fatal("a valid score was dropped, or a publishable key's judge score was queued")
	}
	fctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Flush(fctx); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Events []map[string]any `json:"events"`
	}
	d.call(t, "GET", "/v1/experiments/"+exp.ID+"/events?"+url.Values{"user_id": {"rater"}, "limit": {"10"}}.Encode(), nil, true, 200, &got)
	var call map[string]any
	for _, e := range got.Events {
		if e["type"] == "model_call" {
			call = e
		}
	}
	if call["event_id"] != callID || math.Abs(call["cost_usd"].(float64)-(5*2.5e-6+1e-5)) > 1e-12 {
		t.Fatalf("stored model_call %v, call id %q", call, callID)
	}
	answers.mu.Lock()
	defer answers.mu.Unlock()
	if len(answers.answers) != 1 || !strings.HasPrefix(answers.answers[0], "202 ") || !strings.Contains(answers.answers[0], `"accepted":3`) ||
		c.DroppedEvents() != 0 {
		t.Fatalf("answers to POST /v1/scores %q, dropped %d", answers.answers, c.DroppedEvents())
	}
}
