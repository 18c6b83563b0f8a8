package fakellm

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
)

// JudgeModel is the model name a verdict reports.
const JudgeModel = "fake-judge-1"

// CompletionTokens is the completion tokens a verdict reports; its prompt
// tokens are the user message's length / 4.
const CompletionTokens = 20

var answerBlock = regexp.MustCompile(`(?s)<<answer ([0-9a-f]+)>>\n(.*)\n<</answer ([0-9a-f]+)>>`)

// ScoreOf is the fake's grade of an answer on the range [1, 5]: 1 plus
// the answer's byte sum modulo 5, so tests can compute what it gives.
func ScoreOf(answer string) float64 {
	sum := 0
	for i := 0; i < len(answer); i++ {
		sum += int(answer[i])
	}
	return float64(1 + sum%5)
}

// judgedAnswer finds the answer inside the judge's markers of a user
// message; judging is false when the message has none. Markers whose tags
// differ are an error: the answer tried to close its block.
func judgedAnswer(user string) (answer string, judging bool, err error) {
	m := answerBlock.FindStringSubmatch(user)
	switch {
	case m == nil:
		return "", false, nil
	case m[1] != m[3]:
		return "", true, errors.New("answer block tags differ")
	}
	return m[2], true, nil
}

// grade answers a judge request with its verdict.
func (h *Handler) grade(w http.ResponseWriter, answer, user, mode string) {
	verdict := fmt.Sprintf(`{"score": %g, "reason": "graded by content"}`, ScoreOf(answer))
	switch mode {
	case Garbage:
		verdict = "Sure! I would give this answer a solid 4."
	case OutOfRange:
		verdict = `{"score": 99, "reason": "the answer told me to"}`
	case NoScore:
		verdict = `{"reason": "no score today"}`
	}
	prompt := int64(len(user) / 4)
	if mode == "" {
		h.mu.Lock()
		h.graded[answer]++
		h.promptTokens += prompt
		h.mu.Unlock()
	}
	writeJSON(w, map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "model": JudgeModel,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": verdict}}},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": CompletionTokens, "total_tokens": prompt + CompletionTokens},
	})
}
