// Package fakejudge is an OpenAI-compatible chat-completions server for
// tests: a real HTTP server that grades the answer inside expd's judge
// delimiters by its content (ScoreOf), and answers 429, 500, a timeout
// or garbage on demand, either for the next calls (FailNext) or for any
// answer carrying a trigger text (the Trigger constants).
package fakejudge

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Failure modes.
const (
	RateLimited = "rate_limited" // 429 with Retry-After: 1
	ServerError = "server_error" // 500
	Timeout     = "timeout"      // no answer until the client gives up
	Garbage     = "garbage"      // 200 whose verdict is not JSON
	OutOfRange  = "out_of_range" // 200 with a score of 99
	NoScore     = "no_score"     // 200 with {"reason": ...} only
)

// Triggers: an answer containing "[[<mode>]]" is always answered so.
func Trigger(mode string) string { return "[[" + mode + "]]" }

// Model is the model name the fake reports in its usage.
const Model = "fake-judge-1"

// Tokens the fake reports per call: completion tokens are fixed,
// prompt tokens are the user message's length / 4.
const CompletionTokens = 20

// Server is a running fake judge.
type Server struct {
	*httptest.Server
	Key string // the api key it accepts (Bearer)

	mu                   sync.Mutex
	failNext             []string
	latency              time.Duration
	rejectResponseFormat bool
	calls                int
	graded               map[string]int // answer -> verdicts given
	requests             []string       // raw request bodies
	promptTokens         int64
}

var answerBlock = regexp.MustCompile(`(?s)<<answer ([0-9a-f]+)>>\n(.*)\n<</answer ([0-9a-f]+)>>`)

// New starts a fake judge accepting key; it stops with the test.
func New(t testing.TB, key string) *Server {
	s := &Server{Key: key, graded: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// BaseURL is the endpoint's base_url (…/v1).
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// ScoreOf is the fake's grade of an answer on the range [1, 5]: 1 plus
// the answer's byte sum modulo 5, so tests can compute what it gives.
func ScoreOf(answer string) float64 {
	sum := 0
	for i := 0; i < len(answer); i++ {
		sum += int(answer[i])
	}
	return float64(1 + sum%5)
}

// FailNext makes the next calls fail, one mode each, in order.
func (s *Server) FailNext(modes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = append(s.failNext, modes...)
}

// SetLatency delays every answer.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// RejectResponseFormat makes the fake answer 400 to a request with
// response_format, as endpoints without structured outputs do.
func (s *Server) RejectResponseFormat() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejectResponseFormat = true
}

// Calls is how many requests arrived.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Graded is how many verdicts the fake gave for answer.
func (s *Server) Graded(answer string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.graded[answer]
}

// Requests returns every request body received.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// PromptTokens is the sum of prompt tokens reported on verdicts.
func (s *Server) PromptTokens() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.promptTokens
}

type request struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	ResponseFormat json.RawMessage `json:"response_format"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var body strings.Builder
	var req request
	err := json.NewDecoder(teeReader{r, &body}).Decode(&req)
	s.mu.Lock()
	s.calls++
	s.requests = append(s.requests, body.String())
	mode := ""
	if len(s.failNext) > 0 {
		mode, s.failNext = s.failNext[0], s.failNext[1:]
	}
	latency, rejectRF := s.latency, s.rejectResponseFormat
	s.mu.Unlock()

	switch {
	case r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost:
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	case r.Header.Get("Authorization") != "Bearer "+s.Key:
		http.Error(w, `{"error":{"message":"invalid api key"}}`, http.StatusUnauthorized)
		return
	case err != nil || len(req.Messages) != 2:
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	case rejectRF && len(req.ResponseFormat) > 0:
		http.Error(w, `{"error":{"message":"response_format is not supported by this model"}}`, http.StatusBadRequest)
		return
	}
	user := req.Messages[1].Content
	m := answerBlock.FindStringSubmatch(user)
	if m == nil || m[1] != m[3] {
		http.Error(w, `{"error":{"message":"no answer block"}}`, http.StatusBadRequest)
		return
	}
	answer := m[2]
	for _, t := range []string{RateLimited, ServerError, Timeout, Garbage, OutOfRange, NoScore} {
		if mode == "" && strings.Contains(answer, Trigger(t)) {
			mode = t
		}
	}
	if latency > 0 || mode == Timeout {
		wait := latency
		if mode == Timeout {
			wait = time.Hour
		}
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return
		}
	}
	verdict := fmt.Sprintf(`{"score": %g, "reason": "graded by content"}`, ScoreOf(answer))
	switch mode {
	case RateLimited:
		w.Header().Set("Retry-After", "1")
		http.Error(w, `{"error":{"message":"rate limited"}}`, http.StatusTooManyRequests)
		return
	case ServerError:
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusInternalServerError)
		return
	case Garbage:
		verdict = "Sure! I would give this answer a solid 4."
	case OutOfRange:
		verdict = `{"score": 99, "reason": "the answer told me to"}`
	case NoScore:
		verdict = `{"reason": "no score today"}`
	}
	prompt := int64(len(user) / 4)
	s.mu.Lock()
	if mode == "" {
		s.graded[answer]++
		s.promptTokens += prompt
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "model": Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": verdict}}},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": CompletionTokens, "total_tokens": prompt + CompletionTokens},
	})
}

type teeReader struct {
	r *http.Request
	b *strings.Builder
}

func (t teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Body.Read(p)
	t.b.Write(p[:n])
	return n, err
}
