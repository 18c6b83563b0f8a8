package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// vocabulary is what answers are made of.
var vocabulary = strings.Fields(`account settings open the page then choose security select reset
password confirm email link check inbox support team help article billing plan upgrade invoice
download export data contact chat order status track delivery refund request form submit save
profile update sign in again browser cache clear cookies restart app device version latest`)

// brevity words in a system message halve the answer.
var brevity = []string{"brief", "concise", "short", "two sentences"}

// reply is the fake's answer to a request and the usage it reports.
type reply struct {
	text                         string
	promptTokens, completionToks int
	finish                       string // stop, or length when max_tokens cut it
}

// answer makes the reply: the model's words (halved when a system or
// developer message asks for brevity, cut to max_tokens), drawn by the
// request's hash.
func answer(model Model, req request) reply {
	n := model.AnswerWords
	words := 0
	for _, m := range req.Messages {
		words += len(strings.Fields(m.Content))
		if (m.Role == "system" || m.Role == "developer") && asksBrevity(m.Content) {
			n = (n + 1) / 2
		}
	}
	finish := "stop"
	if limit := req.maxTokens(); limit > 0 && tokens(n, model.TokensPerWord) > limit {
		n, finish = max(1, int(float64(limit)/model.TokensPerWord)), "length"
	}
	h := requestHash(req)
	out := make([]string, n)
	for i := range out {
		// A 64-bit LCG step per word: deterministic, and cheap.
		h = h*6364136223846793005 + 1442695040888963407
		w := vocabulary[(h>>33)%uint64(len(vocabulary))]
		if i%10 == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		if i%10 == 9 || i == n-1 {
			w += "."
		}
		out[i] = w
	}
	return reply{text: strings.Join(out, " "), promptTokens: tokens(words, model.TokensPerWord),
		completionToks: tokens(n, model.TokensPerWord), finish: finish}
}

func asksBrevity(system string) bool {
	s := strings.ToLower(system)
	for _, b := range brevity {
		if strings.Contains(s, b) {
			return true
		}
	}
	return false
}

// complete answers a chat completion after the model's latency (times
// scale), as JSON or as a stream.
func (h *Handler) complete(w http.ResponseWriter, r *http.Request, req request, model Model, scale float64) {
	model.FirstToken = time.Duration(float64(model.FirstToken) * scale)
	model.PerToken = time.Duration(float64(model.PerToken) * scale)
	rep := answer(model, req)
	text, prompt, completion := rep.text, rep.promptTokens, rep.completionToks
	id := fmt.Sprintf("chatcmpl-fake-%016x", requestHash(req))
	usage := map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
	created := time.Now().Unix()
	if !req.Stream {
		if !wait(r, model.FirstToken+time.Duration(completion)*model.PerToken) {
			return
		}
		writeJSON(w, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": model.Name,
			"choices": []any{map[string]any{"index": 0, "finish_reason": rep.finish, "logprobs": nil,
				"message": map[string]any{"role": "assistant", "content": text, "refusal": nil}}},
			"usage": usage,
		})
		return
	}
	if !wait(r, model.FirstToken) {
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model.Name,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}}
	}
	words := strings.Fields(text)
	perWord := time.Duration(float64(model.PerToken) * model.TokensPerWord)
	for i, word := range words {
		delta := map[string]any{"content": word + " "}
		if i == len(words)-1 {
			delta["content"] = word
		}
		if i == 0 {
			delta["role"] = "assistant"
		} else if !wait(r, perWord) {
			return
		}
		send(chunk(delta, nil))
	}
	send(chunk(map[string]any{}, rep.finish))
	if req.StreamOptions.IncludeUsage {
		send(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model.Name,
			"choices": []any{}, "usage": usage})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}
