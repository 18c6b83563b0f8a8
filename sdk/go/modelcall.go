package expd

import (
	"context"
	"math"
	"sync"
	"time"
)

type userKey struct{}

// WithUser binds a user to ctx: model calls made with it (through
// Transport, or StartModelCall with UserFrom) are recorded for that user.
func WithUser(ctx context.Context, userID string) context.Context {
	return context.WithValue(ctx, userKey{}, userID)
}

// UserFrom returns the user bound by WithUser.
func UserFrom(ctx context.Context) (string, bool) {
	u, ok := ctx.Value(userKey{}).(string)
	return u, ok
}

// ModelCall is one measured model call. Starting it queues the call's
// exposure; Finish queues a model_call event with the latency, the error
// and whatever the caller set (FirstToken, SetUsage, Model, Response, CostUSD).
type ModelCall struct {
	Experiment string
	UserID     string
	// Variant is the user's variant ("" before the config loads: use control).
	Variant  string
	Model    string
	Prompt   string
	Response string
	CostUSD  *float64

	c                                      *Client
	mu                                     sync.Mutex
	inputTokens, outputTokens, totalTokens *int
	started, firstToken                    time.Time
	finished                               bool
}

// StartModelCall starts the clock of one model call by userID.
func (c *Client) StartModelCall(ctx context.Context, experiment, userID string) *ModelCall {
	v, _, _ := c.expose(experiment, userID, exposeAlways)
	return &ModelCall{c: c, Experiment: experiment, UserID: userID, Variant: v, started: time.Now()}
}

// FirstToken marks the first streamed token (only the first mark counts).
func (m *ModelCall) FirstToken() {
	m.mu.Lock()
	if m.firstToken.IsZero() {
		m.firstToken = time.Now()
	}
	m.mu.Unlock()
}

// SetUsage reports token counts; total < 0 means input + output.
func (m *ModelCall) SetUsage(input, output, total int) {
	if total < 0 {
		total = input + output
	}
	m.mu.Lock()
	m.inputTokens, m.outputTokens, m.totalTokens = &input, &output, &total
	m.mu.Unlock()
}

// Finish records the call once (later calls are ignored); err is the call's failure, if any.
func (m *ModelCall) Finish(err error) {
	ended := time.Now()
	m.mu.Lock()
	if m.finished {
		m.mu.Unlock()
		return
	}
	m.finished = true
	fields := map[string]any{
		"experiment_id": m.Experiment,
		"user_id":       m.UserID,
		"latency_ms":    millis(ended.Sub(m.started)),
		"input_tokens":  m.inputTokens,
		"output_tokens": m.outputTokens,
		"total_tokens":  m.totalTokens,
		"error":         nil,
	}
	if m.Variant != "" {
		fields["variant"] = m.Variant
	}
	if m.Model != "" {
		fields["model"] = m.Model
	}
	if err != nil {
		fields["error"] = err.Error()
	}
	if !m.firstToken.IsZero() {
		fields["time_to_first_token_ms"] = millis(m.firstToken.Sub(m.started))
	}
	if m.CostUSD != nil {
		fields["cost_usd"] = *m.CostUSD
	}
	if m.Prompt != "" && m.c.captureText {
		fields["prompt"] = m.Prompt
	}
	if m.Response != "" && m.c.captureText {
		fields["response"] = m.Response
	}
	m.mu.Unlock()
	m.c.record(EventModelCall, fields)
}

func millis(d time.Duration) float64 {
	return math.Round(float64(d.Microseconds())) / 1000
}
