// Package fakellm is an OpenAI-compatible model server whose every answer,
// latency, token count and error follows from the request, so that the
// quick start (go run ./examples/fakellm) and the judges' tests can assert
// what it did. It serves
//
//	POST /v1/chat/completions   JSON, or server-sent events with "stream": true
//	                            (usage in a last chunk with stream_options.include_usage)
//	GET  /v1/models             the models below
//
// with the key of Handler.Key as "Authorization: Bearer KEY" (an empty Key
// accepts any key, as the quick start does). The models (Models):
//
//	model      first token  per output token  tokens per word  answer words  errors
//	fake-mini  20 ms        0.5 ms            1.3              40            1 request in 25
//	fake-pro   60 ms        1 ms              1.3              80            none
//
// An answer is AnswerWords words (half as many when a system or developer
// message asks for brevity: "brief", "concise", "short" or "two
// sentences"; cut to max_tokens or max_completion_tokens, with
// finish_reason "length"), drawn from a fixed vocabulary by a hash of the
// model and the messages: the same request always gets the same answer.
// Content may be a string or a list of parts (their text parts are read). Usage: prompt tokens are the words of every
// message times the model's tokens per word, completion tokens the answer's
// words times the same, each rounded up. Latency: the first-token latency,
// then the per-token latency for each completion token (a stream sends its
// first chunk after the first-token latency, then one chunk per word). A
// model with ErrorEvery n answers 500 to the requests whose hash is 0
// modulo n: about one in n, always the same ones, whatever the order or
// concurrency of the calls. An unknown model is a 404 model_not_found.
//
// Judge mode: a request whose last user message carries expd's judge
// markers (<<answer TAG>> ... <</answer TAG>>, docs/quality.md) is graded
// instead of answered: the verdict {"score": ScoreOf(answer), ...} as the
// message content, whatever the model. Tests make any call fail on demand
// (FailNext, or a Trigger text inside the graded answer or the user
// message), slow every answer (SetLatency), refuse response_format
// (RejectResponseFormat), and read what arrived (Calls, Requests, Graded,
// PromptTokens).
package fakellm

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Model is one model the fake serves.
type Model struct {
	Name          string
	FirstToken    time.Duration // latency before the first token
	PerToken      time.Duration // latency of each further completion token
	TokensPerWord float64
	AnswerWords   int
	ErrorEvery    int // 0: never
}

// Models is the fake's model table (the package comment's).
var Models = []Model{
	{Name: "fake-mini", FirstToken: 20 * time.Millisecond, PerToken: 500 * time.Microsecond, TokensPerWord: 1.3, AnswerWords: 40, ErrorEvery: 25},
	{Name: "fake-pro", FirstToken: 60 * time.Millisecond, PerToken: time.Millisecond, TokensPerWord: 1.3, AnswerWords: 80},
}

// Lookup returns the model of that name.
func Lookup(name string) (Model, bool) {
	for _, m := range Models {
		if m.Name == name {
			return m, true
		}
	}
	return Model{}, false
}

// Failure modes, for FailNext and Trigger.
const (
	RateLimited = "rate_limited" // 429 with Retry-After: 1
	ServerError = "server_error" // 500
	Timeout     = "timeout"      // no answer until the client gives up
	Garbage     = "garbage"      // judge mode: 200 whose verdict is not JSON
	OutOfRange  = "out_of_range" // judge mode: 200 with a score of 99
	NoScore     = "no_score"     // judge mode: 200 with {"reason": ...} only
)

var modes = []string{RateLimited, ServerError, Timeout, Garbage, OutOfRange, NoScore}

// Trigger is the text that makes any request whose graded answer (judge
// mode) or last user message carries it fail in that mode.
func Trigger(mode string) string { return "[[" + mode + "]]" }

// Handler is the fake's HTTP handler and what it recorded.
type Handler struct {
	Key string // the Bearer key it accepts; "" accepts any

	mu                   sync.Mutex
	failNext             []string
	latency              time.Duration
	scale                float64 // of the models' latencies
	rejectResponseFormat bool
	calls                int
	graded               map[string]int // judge mode: answer -> verdicts given
	requests             []string       // raw request bodies
	promptTokens         int64          // judge mode: prompt tokens of verdicts
}

// NewHandler returns a fake accepting key ("" accepts any).
func NewHandler(key string) *Handler {
	return &Handler{Key: key, graded: map[string]int{}, scale: 1}
}

// ScaleModelLatency multiplies the models' latencies by f (0: none), for
// tests that send many requests.
func (h *Handler) ScaleModelLatency(f float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.scale = f
}

// FailNext makes the next chat-completion requests fail, one mode each, in order.
func (h *Handler) FailNext(modes ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failNext = append(h.failNext, modes...)
}

// SetLatency adds d to every answer's latency.
func (h *Handler) SetLatency(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.latency = d
}

// RejectResponseFormat makes the fake answer 400 to a request with
// response_format, as endpoints without structured outputs do.
func (h *Handler) RejectResponseFormat() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rejectResponseFormat = true
}

// Calls is how many chat-completion requests arrived.
func (h *Handler) Calls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls
}

// Graded is how many verdicts the fake gave for answer.
func (h *Handler) Graded(answer string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.graded[answer]
}

// Requests returns every chat-completion request body received.
func (h *Handler) Requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.requests...)
}

// PromptTokens is the sum of prompt tokens reported on verdicts.
func (h *Handler) PromptTokens() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.promptTokens
}

// Message is a chat message; its content is a string or, as the OpenAI
// clients may send it, a list of parts whose text parts are read.
type Message struct {
	Role    string
	Content string
}

// UnmarshalJSON reads content as a string or a list of parts.
func (m *Message) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	m.Role, m.Content = raw.Role, ""
	if len(raw.Content) == 0 || string(raw.Content) == "null" {
		return nil
	}
	if raw.Content[0] == '"' {
		return json.Unmarshal(raw.Content, &m.Content)
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw.Content, &parts); err != nil {
		return fmt.Errorf("content: want a string or a list of parts: %w", err)
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	m.Content = strings.Join(texts, "\n")
	return nil
}

type request struct {
	Model          string          `json:"model"`
	Messages       []Message       `json:"messages"`
	ResponseFormat json.RawMessage `json:"response_format"`
	Stream         bool            `json:"stream"`
	MaxTokens      int             `json:"max_tokens"`
	MaxCompletion  int             `json:"max_completion_tokens"`
	StreamOptions  struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// maxTokens is the completion token limit asked for (0: none);
// max_completion_tokens is the newer name of max_tokens.
func (r request) maxTokens() int {
	if r.MaxCompletion > 0 {
		return r.MaxCompletion
	}
	return r.MaxTokens
}

// lastUser is the content of the last user message.
func (r request) lastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		if h.authorized(w, r) {
			h.listModels(w)
		}
		return
	case r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost:
		writeError(w, http.StatusNotFound, "not found", "invalid_request_error", "not_found")
		return
	}
	var body strings.Builder
	var req request
	err := json.NewDecoder(teeReader{r, &body}).Decode(&req)
	h.mu.Lock()
	h.calls++
	h.requests = append(h.requests, body.String())
	mode := ""
	if len(h.failNext) > 0 {
		mode, h.failNext = h.failNext[0], h.failNext[1:]
	}
	latency, rejectRF, scale := h.latency, h.rejectResponseFormat, h.scale
	h.mu.Unlock()

	switch {
	case !h.authorized(w, r):
		return
	case err != nil || len(req.Messages) == 0:
		writeError(w, http.StatusBadRequest, "bad request: want a JSON body with messages", "invalid_request_error", "")
		return
	case rejectRF && len(req.ResponseFormat) > 0:
		writeError(w, http.StatusBadRequest, "response_format is not supported by this model", "invalid_request_error", "")
		return
	}
	user := req.lastUser()
	answer, judging, err := judgedAnswer(user)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), "invalid_request_error", "")
		return
	}
	model, known := Lookup(req.Model)
	if !judging && !known {
		writeError(w, http.StatusNotFound, fmt.Sprintf("The model `%s` does not exist", req.Model), "invalid_request_error", "model_not_found")
		return
	}
	if mode == "" {
		mode = triggered(user, answer, judging)
	}
	if mode == "" && !judging && model.ErrorEvery > 0 && requestHash(req)%uint64(model.ErrorEvery) == 0 {
		mode = ServerError
	}
	if mode == Timeout {
		latency = time.Hour
	}
	if !wait(r, latency) {
		return
	}
	switch mode {
	case RateLimited:
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, "rate limited", "rate_limit_error", "rate_limit_exceeded")
		return
	case ServerError:
		writeError(w, http.StatusInternalServerError, "overloaded", "server_error", "")
		return
	}
	if judging {
		h.grade(w, answer, user, mode)
		return
	}
	h.complete(w, r, req, model, scale)
}

// triggered is the mode a Trigger text in the request asks for.
func triggered(user, answer string, judging bool) string {
	text := user
	if judging {
		text = answer
	}
	for _, m := range modes {
		if strings.Contains(text, Trigger(m)) {
			return m
		}
	}
	return ""
}

func (h *Handler) authorized(w http.ResponseWriter, r *http.Request) bool {
	got := r.Header.Get("Authorization")
	if h.Key == "" && strings.HasPrefix(got, "Bearer ") || h.Key != "" && got == "Bearer "+h.Key {
		return true
	}
	writeError(w, http.StatusUnauthorized, "invalid api key", "invalid_request_error", "invalid_api_key")
	return false
}

func (h *Handler) listModels(w http.ResponseWriter) {
	data := make([]map[string]any, 0, len(Models))
	for _, m := range Models {
		data = append(data, map[string]any{"id": m.Name, "object": "model", "created": 0, "owned_by": "fakellm"})
	}
	writeJSON(w, map[string]any{"object": "list", "data": data})
}

// wait sleeps d unless the client leaves first; false when it left.
func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// requestHash is FNV-1a of the model and the messages: it picks the
// answer's words and the requests that fail.
func requestHash(req request) uint64 {
	f := fnv.New64a()
	f.Write([]byte(req.Model))
	for _, m := range req.Messages {
		f.Write([]byte{0})
		f.Write([]byte(m.Role))
		f.Write([]byte{0})
		f.Write([]byte(m.Content))
	}
	return f.Sum64()
}

// tokens is words × tokens per word, rounded up (less a hair, so that
// 40 × 1.3 is 52 despite binary floating point).
func tokens(words int, perWord float64) int {
	return int(math.Ceil(float64(words)*perWord - 1e-9))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers in OpenAI's error shape.
func writeError(w http.ResponseWriter, status int, msg, typ, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var c any
	if code != "" {
		c = code
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": c}})
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
