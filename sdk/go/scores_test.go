package expd

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func flushed(t *testing.T, c *Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestTransportGivesEachCallItsID(t *testing.T) {
	c, srv := readyClient(t)
	provider := fakeProvider(t)
	hc := &http.Client{Transport: c.Transport("two-arms", nil)}
	ctx := WithUser(context.Background(), "user-1")
	if _, ok := LastCallID(ctx); ok {
		t.Fatal("a call id before any call")
	}
	res, _ := chat(t, hc, ctx, provider.URL, `{"model":"gpt-4o","messages":[]}`)
	plain := res.Header.Get(CallIDHeader)
	if last, _ := LastCallID(ctx); last != plain || plain == "" {
		t.Fatalf("header %q, LastCallID %q", plain, last)
	}
	// A stream's id is there before its body is read.
	req, _ := http.NewRequestWithContext(ctx, "POST", provider.URL+"/v1/chat/completions", strings.NewReader(`{"model":"gpt-4o","stream":true}`))
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	streamed := res.Header.Get(CallIDHeader)
	if last, _ := LastCallID(ctx); last != streamed || streamed == plain {
		t.Fatalf("stream header %q, LastCallID %q, first %q", streamed, last, plain)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	res, _ = chat(t, hc, context.Background(), provider.URL, `{"model":"gpt-4o"}`)
	if res.Header.Get(CallIDHeader) != "" {
		t.Fatal("an unmeasured call has an id")
	}
	flushed(t, c)
	var ids []string
	for _, e := range srv.eventsOf("model_call") {
		ids = append(ids, e["event_id"].(string))
	}
	if !slices.Equal(ids, []string{plain, streamed}) {
		t.Fatalf("model_call ids %v, want %v", ids, []string{plain, streamed})
	}
}

func TestStartModelCallHasItsID(t *testing.T) {
	c, srv := readyClient(t)
	ctx := WithUser(context.Background(), "user-9")
	call := c.StartModelCall(ctx, "two-arms", "user-9")
	call.Finish(nil)
	flushed(t, c)
	last, _ := LastCallID(ctx)
	if got := srv.eventsOf("model_call"); len(got) != 1 || got[0]["event_id"] != call.ID || last != call.ID {
		t.Fatalf("events %v, id %q, last %q", got, call.ID, last)
	}
}

func TestScoreReachesV1Scores(t *testing.T) {
	c, srv := readyClient(t)
	provider := fakeProvider(t)
	hc := &http.Client{Transport: c.Transport("two-arms", nil)}
	ctx := WithUser(context.Background(), "user-1")
	chat(t, hc, ctx, provider.URL, `{"model":"gpt-4o"}`)
	id, _ := LastCallID(ctx)
	if !c.Score(ctx, id, "thumbs_up", 1) {
		t.Fatal("Score dropped")
	}
	at := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	c.Score(ctx, "call-1", "helpfulness", 4, ScoreOptions{Comment: strings.Repeat("é", 3000),
		Evaluator: "helpfulness-v2", EvaluatorVersion: "7", Timestamp: at})
	flushed(t, c)
	scores := srv.scores()
	if len(scores) != 2 {
		t.Fatalf("%d scores", len(scores))
	}
	first, second := scores[0], scores[1]
	if len(first) != 5 || first["call_id"] != id || first["name"] != "thumbs_up" || first["value"] != 1.0 || first["source"] != "human" {
		t.Fatalf("score %v", first)
	}
	if ts, _ := first["timestamp"].(string); len(ts) != len("2026-11-26T10:00:00.000Z") || !strings.HasSuffix(ts, "Z") {
		t.Fatalf("timestamp %q", ts)
	}
	comment, _ := second["comment"].(string)
	if len(comment) != 4096 || !utf8.ValidString(comment) || second["timestamp"] != at.UTC().Format("2006-01-02T15:04:05.000Z") ||
		second["source"] != "human" || second["evaluator"] != "helpfulness-v2" || second["evaluator_version"] != "7" ||
		len(second) != 8 {
		t.Fatalf("score %v (comment %d bytes)", second, len(comment))
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.scoreBodies[0]) != 1 || srv.scoreKeys[0] != "pk_test" {
		t.Fatalf("body %v, key %q", srv.scoreBodies[0], srv.scoreKeys[0])
	}
}

func TestInvalidScoresAreDroppedNotSent(t *testing.T) {
	c, srv := readyClient(t)
	ctx := context.Background()
	bad := []struct {
		callID, name string
		value        float64
		opts         ScoreOptions
	}{
		{"", "thumbs_up", 1, ScoreOptions{}},
		{"call 4", "thumbs_up", 1, ScoreOptions{}},
		{"call-4", "thumbs up", 1, ScoreOptions{}},
		{"call-4", "", 1, ScoreOptions{}},
		{"call-4", "rating", math.NaN(), ScoreOptions{}},
		{"call-4", "rating", math.Inf(1), ScoreOptions{}},
		{"call-4", "rating", 1, ScoreOptions{Source: "robot"}},
		{"call-4", "rating", 1, ScoreOptions{Comment: "a\x00b"}},
		{"call-4", "rating", 1, ScoreOptions{Source: SourceJudge, JudgeModel: strings.Repeat("m", 257)}},
		{"call-4", "rating", 1, ScoreOptions{JudgeModel: "gpt-4.1"}},
		{"call-4", "rating", 1, ScoreOptions{EvaluatorVersion: strings.Repeat("v", 129)}},
		{"call-4", "rating", 1, ScoreOptions{Timestamp: time.Now().Add(-25 * time.Hour)}},
		{"call-4", "rating", 1, ScoreOptions{Timestamp: time.Now().Add(time.Hour)}},
		{"call-4", "rating", 1, ScoreOptions{Source: SourceJudge}}, // a publishable key
	}
	for _, b := range bad {
		if c.Score(ctx, b.callID, b.name, b.value, b.opts) {
			t.Errorf("Score(%q, %q, %v, %+v) was queued", b.callID, b.name, b.value, b.opts)
		}
	}
	c.Score(ctx, "call-5", "rating", 2)
	flushed(t, c)
	if got := srv.scores(); len(got) != 1 || got[0]["call_id"] != "call-5" {
		t.Fatalf("scores %v", got)
	}
}

// TestJudgeScoresWithASecretKey: every field on the wire, with the key judges use.
func TestJudgeScoresWithASecretKey(t *testing.T) {
	now := time.Now()
	got, err := newScore("call-1", "helpfulness", 4, ScoreOptions{Source: SourceJudge, Evaluator: "rubric", EvaluatorVersion: "7",
		JudgeModel: "gpt-4.1", Comment: "clear", Timestamp: now}, now)
	want := map[string]any{"type": "score", "call_id": "call-1", "name": "helpfulness", "value": 4.0, "source": "judge",
		"evaluator": "rubric", "evaluator_version": "7", "judge_model": "gpt-4.1", "comment": "clear",
		"timestamp": now.UTC().Format("2006-01-02T15:04:05.000Z")}
	if err != nil || !maps.Equal(got, want) {
		t.Fatalf("newScore = %v, %v; want %v", got, err, want)
	}
	c, err := New(Options{APIKey: "sk_test", BaseURL: "http://127.0.0.1:1", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		c.Close(ctx) // nothing listens: what is queued is dropped
	}()
	if !c.Score(context.Background(), "call-1", "helpfulness", 4, ScoreOptions{Source: SourceJudge, JudgeModel: "gpt-4.1"}) {
		t.Fatal("a secret key's judge score was dropped")
	}
}

func TestScoresShareTheQueueRetriesAndSpill(t *testing.T) {
	var sc scenarioFile
	readJSON(t, "conformance/scenario.json", &sc)
	srv := newFakeServer(t)
	srv.setConfig(sc.Configs[0])
	spill := filepath.Join(t.TempDir(), "spill.jsonl")
	opts := Options{APIKey: "pk_test", BaseURL: srv.URL, FlushInterval: 20 * time.Millisecond, RetryBackoff: time.Millisecond,
		BatchSize: 10, SpillPath: spill, Logger: quietLogger()}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	srv.mu.Lock()
	srv.failScores = []int{503, 503}
	srv.mu.Unlock()
	for i := range 25 {
		c.Track(ctx, "purchase", map[string]any{"experiment_id": "two-arms", "user_id": "u", "value": 1})
		c.Score(ctx, "call-"+string(rune('a'+i)), "rating", float64(i))
	}
	flushed(t, c)
	if got := len(srv.scores()); got != 25 || len(srv.eventsOf("business_event")) != 25 || c.DroppedEvents() != 0 {
		t.Fatalf("%d scores, %d events, %d dropped", got, len(srv.eventsOf("business_event")), c.DroppedEvents())
	}
	srv.mu.Lock()
	for _, b := range srv.scoreBodies {
		if n := len(b["scores"].([]any)); n > 10 {
			t.Errorf("a body of %d scores", n)
		}
	}
	srv.failScores = []int{503, 503, 503, 503, 503, 503, 503}
	srv.mu.Unlock()

	// Undeliverable: spilled with its type, replayed by the next client to /v1/scores.
	c.Score(ctx, "call-z", "thumbs_up", 0, ScoreOptions{Comment: "kept"})
	closeCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	c.Close(closeCtx)
	cancel()
	f, err := os.Open(spill)
	if err != nil {
		t.Fatal(err)
	}
	var line map[string]any
	sc2 := bufio.NewScanner(f)
	for sc2.Scan() {
		json.Unmarshal(sc2.Bytes(), &line)
	}
	f.Close()
	if line["type"] != "score" || line["call_id"] != "call-z" {
		t.Fatalf("spilled %v", line)
	}
	srv.mu.Lock()
	srv.failScores = nil
	srv.mu.Unlock()
	c2, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c2.Close(context.Background()) })
	eventually(t, "the replayed score", func() bool { return len(srv.scores()) == 26 })
	got := srv.scores()[25]
	if got["call_id"] != "call-z" || got["comment"] != "kept" || got["timestamp"] != line["timestamp"] || got["type"] != nil {
		t.Fatalf("replayed %v", got)
	}
}

func TestPublishableKeysByPrefix(t *testing.T) {
	for key, want := range map[string]bool{"expd_pk_abc": true, "pk_abc": true, "expd_sk_abc": false, "sk_abc": false} {
		c, err := New(Options{APIKey: key, BaseURL: "http://127.0.0.1:1", Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		c.Close(ctx)
		cancel()
		if c.publishable != want {
			t.Errorf("%s: publishable %v", key, c.publishable)
		}
	}
}
