package fakellm_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/internal/fakellm"
)

type completion struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

func post(t *testing.T, s *fakellm.Server, key, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.BaseURL()+"/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func chat(model, system, user string, extra string) string {
	b, _ := json.Marshal([]map[string]string{{"role": "system", "content": system}, {"role": "user", "content": user}})
	return fmt.Sprintf(`{"model": %q, "messages": %s%s}`, model, b, extra)
}

// The same request gets the same answer, words and usage as the table
// says; brevity in the system message halves the answer; latency is at
// least the model's.
func TestChatIsDeterministic(t *testing.T) {
	s := fakellm.New(t, "")
	for _, c := range []struct {
		model, system string
		words         int
		minLatency    time.Duration
	}{
		{"fake-mini", "You are a helpful support agent.", 40, 20*time.Millisecond + 52*500*time.Microsecond},
		{"fake-mini", "Answer in two sentences.", 20, 20*time.Millisecond + 26*500*time.Microsecond},
		{"fake-pro", "You are a helpful support agent.", 80, 60*time.Millisecond + 104*time.Millisecond},
		{"fake-pro", "Be concise.", 40, 60*time.Millisecond + 52*time.Millisecond},
	} {
		var answers []string
		for i := 0; i < 2; i++ {
			start := time.Now()
			resp := post(t, s, "any-key", chat(c.model, c.system, "How do I reset my password?", ""))
			var got completion
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%s: status %d, %v", c.model, resp.StatusCode, err)
			}
			took := time.Since(start)
			text := got.Choices[0].Message.Content
			answers = append(answers, text)
			wantCompletion := (c.words*13 + 9) / 10
			if n := len(strings.Fields(text)); n != c.words || got.Usage.CompletionTokens != wantCompletion ||
				got.Usage.PromptTokens != ((len(strings.Fields(c.system))+6)*13+9)/10 || got.Model != c.model || took < c.minLatency {
				t.Fatalf("%s %q: %d words, usage %+v, model %s, took %v; want %d words, %d completion tokens, at least %v",
					c.model, c.system, n, *got.Usage, got.Model, took, c.words, wantCompletion, c.minLatency)
			}
		}
		if answers[0] != answers[1] {
			t.Fatalf("two answers to one request: %q, %q", answers[0], answers[1])
		}
	}
}

// A stream sends the same answer word by word, a finish chunk, the usage
// when asked, then [DONE], as the openai clients expect.
func TestChatStreams(t *testing.T) {
	s := fakellm.New(t, "k")
	body := chat("fake-mini", "Be brief.", "Where is my order?", "")
	resp := post(t, s, "k", body)
	var whole completion
	if err := json.NewDecoder(resp.Body).Decode(&whole); err != nil {
		t.Fatal(err)
	}
	stream := post(t, s, "k", chat("fake-mini", "Be brief.", "Where is my order?", `, "stream": true, "stream_options": {"include_usage": true}`))
	if ct := stream.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var text strings.Builder
	chunks, finished, done := 0, false, false
	var usage *completion
	sc := bufio.NewScanner(stream.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || done {
			t.Fatalf("unexpected line %q (done %v)", line, done)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var c completion
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatal(err)
		}
		if c.Usage != nil {
			usage = &c
			continue
		}
		chunks++
		text.WriteString(c.Choices[0].Delta.Content)
		finished = finished || c.Choices[0].FinishReason != nil && *c.Choices[0].FinishReason == "stop"
	}
	if text.String() != whole.Choices[0].Message.Content || chunks != 21 || !finished || !done || usage == nil || *usage.Usage != *whole.Usage {
		t.Fatalf("stream %q in %d chunks (finished %v, done %v, usage %+v), want %q and usage %+v",
			text.String(), chunks, finished, done, usage, whole.Choices[0].Message.Content, *whole.Usage)
	}
}

// fake-mini fails about one request in 25, always the same ones; fake-pro
// never; an unknown model is a 404 and a wrong key a 401.
func TestErrorsFollowTheRequest(t *testing.T) {
	s := fakellm.New(t, "k")
	s.ScaleModelLatency(0)
	failed := map[string][]int{}
	for round := 0; round < 2; round++ {
		for _, model := range []string{"fake-mini", "fake-pro"} {
			var bad []int
			for i := 0; i < 300; i++ {
				resp := post(t, s, "k", chat(model, "Be brief.", fmt.Sprintf("question %d", i), ""))
				io.Copy(io.Discard, resp.Body)
				switch resp.StatusCode {
				case 200:
				case 500:
					bad = append(bad, i)
				default:
					t.Fatalf("status %d", resp.StatusCode)
				}
			}
			if round == 1 && fmt.Sprint(bad) != fmt.Sprint(failed[model]) {
				t.Fatalf("%s failed %v, then %v", model, failed[model], bad)
			}
			failed[model] = bad
		}
	}
	if n := len(failed["fake-mini"]); n < 4 || n > 24 || len(failed["fake-pro"]) != 0 {
		t.Fatalf("failures %v, want about 12 of 300 for fake-mini and none for fake-pro", failed)
	}
	if resp := post(t, s, "k", chat("gpt-5", "x", "y", "")); resp.StatusCode != 404 {
		t.Fatalf("unknown model: %d", resp.StatusCode)
	}
	if resp := post(t, s, "wrong", chat("fake-mini", "x", "y", "")); resp.StatusCode != 401 {
		t.Fatalf("wrong key: %d", resp.StatusCode)
	}
}

func TestModels(t *testing.T) {
	s := fakellm.New(t, "")
	req, _ := http.NewRequest(http.MethodGet, s.BaseURL()+"/models", nil)
	req.Header.Set("Authorization", "Bearer x")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Data) != len(fakellm.Models) || list.Data[0].ID != "fake-mini" {
		t.Fatalf("models %+v, %v", list, err)
	}
}

// Content as a list of parts reads as its text; max_tokens cuts the
// answer with finish_reason "length".
func TestPartsAndMaxTokens(t *testing.T) {
	s := fakellm.New(t, "")
	s.ScaleModelLatency(0)
	read := func(body string) completion {
		var c completion
		resp := post(t, s, "x", body)
		if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.StatusCode != 200 {
			t.Fatalf("status %d, %v: %s", resp.StatusCode, err, body)
		}
		return c
	}
	plain := read(chat("fake-pro", "Be brief.", "Where is my order?", ""))
	parts := read(`{"model": "fake-pro", "messages": [{"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
		{"role": "user", "content": [{"type": "text", "text": "Where is my order?"}]}]}`)
	if n := len(strings.Fields(parts.Choices[0].Message.Content)); n != 40 || *parts.Usage != *plain.Usage {
		t.Fatalf("parts: %d words, usage %+v; want 40 words and usage %+v", n, *parts.Usage, *plain.Usage)
	}
	cut := read(chat("fake-pro", "Be brief.", "Where is my order?", `, "max_tokens": 13`))
	if n := len(strings.Fields(cut.Choices[0].Message.Content)); n != 10 || cut.Usage.CompletionTokens != 13 || *cut.Choices[0].FinishReason != "length" {
		t.Fatalf("max_tokens 13: %d words, usage %+v, finish %q; want 10 words, 13 tokens, length", n, *cut.Usage, *cut.Choices[0].FinishReason)
	}
}
