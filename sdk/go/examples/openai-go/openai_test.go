// Package openaigo checks expd's Transport with the official openai-go
// client: a module of its own, so that the expd Go client itself depends
// on nothing but the standard library. A fake OpenAI-style server answers
// (JSON and a server-sent event stream), a fake expd collects events.
package openaigo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	expd "github.com/expd/expd/sdk/go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

const experimentID = "7f3c2a10-5b1e-4d8a-9c3f-2e6b8d4a1f00"

// fakeExpd serves one config with experiment two-arms (50/50) and keeps the events posted.
type fakeExpd struct {
	mu     sync.Mutex
	events []map[string]any
}

func (f *fakeExpd) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-API-Key") != "pk_test" {
		http.Error(w, "no key", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/config":
		fmt.Fprintf(w, `{"config_version": 1, "experiments": [{"id": %q, "name": "two-arms", "version": 1, "salt": "conformance",
			"bucket_count": 10000, "control": "control",
			"bucket_map": [{"variant": "control", "start": 0, "end": 5000}, {"variant": "treatment", "start": 5000, "end": 10000}],
			"variants": {"control": {"prompt": "Be brief."}, "treatment": {"prompt": "Be friendly."}}}]}`, experimentID)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/events":
		var body struct {
			Events []map[string]any `json:"events"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.events = append(f.events, body.Events...)
		f.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintf(w, `{"accepted": %d, "rejected": [], "config_version": 1}`, len(body.Events))
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeExpd) modelCalls() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, e := range f.events {
		if e["type"] == "model_call" {
			out = append(out, e)
		}
	}
	return out
}

// fakeOpenAI answers chat completions as OpenAI does: JSON, or SSE chunks with usage last.
func fakeOpenAI(t *testing.T) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			t.Errorf("request body: %v", err)
		}
		if req.Model == "overloaded" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error": {"message": "model overloaded", "type": "invalid_request_error"}}`)
			return
		}
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id": "c1", "object": "chat.completion", "created": 1, "model": %q,
				"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Hello there"}}],
				"usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}}`, req.Model)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, chunk := range []string{"Hel", "lo"} {
			fmt.Fprintf(w, "data: {\"id\": \"c2\", \"object\": \"chat.completion.chunk\", \"created\": 1, \"model\": %q, \"choices\": [{\"index\": 0, \"delta\": {\"content\": %q}}]}\n\n", req.Model, chunk)
			w.(http.Flusher).Flush()
		}
		fmt.Fprintf(w, "data: {\"id\": \"c2\", \"object\": \"chat.completion.chunk\", \"created\": 1, \"model\": %q, \"choices\": [], \"usage\": {\"prompt_tokens\": 7, \"completion_tokens\": 2, \"total_tokens\": 9}}\n\n", req.Model)
		io.WriteString(w, "data: [DONE]\n\n")
	}))
}

func TestOpenAIGoThroughTransport(t *testing.T) {
	collector := &fakeExpd{}
	expdSrv := httptest.NewServer(collector)
	defer expdSrv.Close()
	oaiSrv := fakeOpenAI(t)
	defer oaiSrv.Close()

	client, err := expd.New(expd.Options{APIKey: "pk_test", BaseURL: expdSrv.URL, FlushInterval: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	defer client.Close(ctx)
	if err := client.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	oai := openai.NewClient(option.WithBaseURL(oaiSrv.URL), option.WithAPIKey("sk-fake"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: client.Transport("two-arms", nil)}))
	user := expd.WithUser(ctx, "user-1")
	params := openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")}}

	// JSON answer.
	resp, err := oai.Chat.Completions.New(user, params)
	if err != nil || resp.Choices[0].Message.Content != "Hello there" {
		t.Fatalf("completion %+v, %v: the caller must get the answer unchanged", resp, err)
	}
	// Stream, usage in the last chunk.
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := oai.Chat.Completions.NewStreaming(user, params)
	text := ""
	for stream.Next() {
		if ch := stream.Current(); len(ch.Choices) > 0 {
			text += ch.Choices[0].Delta.Content
		}
	}
	if err := stream.Err(); err != nil || text != "Hello" {
		t.Fatalf("stream %q, %v", text, err)
	}
	stream.Close()
	// An API error reaches the caller as openai-go's error and is recorded.
	params.Model = "overloaded"
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
	if _, err := oai.Chat.Completions.New(user, params); err == nil {
		t.Fatal("want the 400 as an error")
	}
	// Without a user in the context: passed through, not recorded.
	params.Model = "gpt-4o-mini"
	if _, err := oai.Chat.Completions.New(ctx, params); err != nil {
		t.Fatal(err)
	}

	if err := client.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	calls := collector.modelCalls()
	if len(calls) != 3 {
		t.Fatalf("%d model_call events, want 3 (JSON, stream, error): %v", len(calls), calls)
	}
	want := []struct {
		model             string
		input, output     float64
		response, errText string
	}{{"gpt-4o-mini", 12, 3, "Hello there", ""}, {"gpt-4o-mini", 7, 2, "Hello", ""}, {"overloaded", 0, 0, "", "HTTP 400"}}
	for i, w := range want {
		e := calls[i]
		if e["experiment_id"] != experimentID || e["user_id"] != "user-1" || e["variant"] == nil || e["model"] != w.model {
			t.Errorf("call %d: %v", i, e)
		}
		if lat, _ := e["latency_ms"].(float64); lat < 0 || e["latency_ms"] == nil {
			t.Errorf("call %d: latency_ms %v", i, e["latency_ms"])
		}
		if w.errText == "" {
			if e["input_tokens"] != w.input || e["output_tokens"] != w.output || e["response"] != w.response {
				t.Errorf("call %d: tokens %v/%v response %v, want %v/%v %q", i, e["input_tokens"], e["output_tokens"], e["response"], w.input, w.output, w.response)
			}
		} else if s, _ := e["error"].(string); len(s) < len(w.errText) || s[:len(w.errText)] != w.errText {
			t.Errorf("call %d: error %v, want %q...", i, e["error"], w.errText)
		}
	}
	if calls[1]["time_to_first_token_ms"] == nil {
		t.Errorf("stream: no time_to_first_token_ms: %v", calls[1])
	}
}
