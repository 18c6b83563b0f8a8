package expd

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

type userKey struct{}

// userBinding is what WithUser puts in a context: the user, and the id of
// the last model call started with the context or one derived from it.
type userBinding struct {
	user     string
	lastCall atomic.Pointer[string]
}

// WithUser binds a user to ctx: model calls made with it (through
// Transport, or StartModelCall with UserFrom) are recorded for that user.
func WithUser(ctx context.Context, userID string) context.Context {
	return context.WithValue(ctx, userKey{}, &userBinding{user: userID})
}

// UserFrom returns the user bound by WithUser.
func UserFrom(ctx context.Context) (string, bool) {
	if b, ok := ctx.Value(userKey{}).(*userBinding); ok {
		return b.user, true
	}
	return "", false
}

// LastCallID returns the id of the last model call started with a context
// derived from ctx's WithUser (through Transport or StartModelCall): the
// event_id of its model_call, for Score. It is set when the call starts, so
// a stream's id is known before its first byte. Calls made concurrently
// with one context race for it: read each call's Expd-Call-Id response
// header instead.
func LastCallID(ctx context.Context) (string, bool) {
	if b, ok := ctx.Value(userKey{}).(*userBinding); ok {
		if id := b.lastCall.Load(); id != nil {
			return *id, true
		}
	}
	return "", false
}

// ModelCall is one measured model call. Starting it queues the call's
// exposure; Finish queues a model_call event with the latency, the error
// and whatever the caller set (FirstToken, SetUsage, Model, Response,
// CostUSD). Without CostUSD, the usage is priced at Price, else at the
// client's table (Options.ModelPrices over the shipped one) by Model.
type ModelCall struct {
	// ID is the event_id of the model_call Finish records: the call id for Score.
	ID         string
	Experiment string
	UserID     string
	// Variant is the user's variant ("" before the config loads: use control).
	Variant  string
	Model    string
	Prompt   string
	Response string
	CostUSD  *float64 // an explicit cost; it wins
	Price    *Price   // this call's price; nil: the client's table

	// outside: the user is not in the experiment (not targeted), so the
	// call records nothing: every event would enter its analysis.
	outside                                bool
	c                                      *Client
	mu                                     sync.Mutex
	inputTokens, outputTokens, totalTokens *int
	started, firstToken                    time.Time
	finished                               bool
}

// StartModelCall starts the clock of one model call by userID, whose
// attributes come from ctx (WithAttributes). Its ID becomes LastCallID of
// ctx's WithUser, if it has one. For a user outside the experiment (not
// targeted) it records nothing: no exposure, no model_call.
func (c *Client) StartModelCall(ctx context.Context, experiment, userID string) *ModelCall {
	d, _, _ := c.decide(ctx, experiment, userID, exposeAlways)
	m := &ModelCall{c: c, ID: uuid4(), Experiment: experiment, UserID: userID, Variant: d.Variant, outside: d.outside(), started: time.Now()}
	if b, ok := ctx.Value(userKey{}).(*userBinding); ok && !m.outside {
		b.lastCall.Store(&m.ID)
	}
	return m
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
	if m.finished || m.outside {
		m.finished = true
		m.mu.Unlock()
		return
	}
	m.finished = true
	fields := map[string]any{
		"event_id":      m.ID,
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
	if cost := m.cost(); cost != nil {
		fields["cost_usd"] = *cost
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

// cost is the explicit cost, else the usage priced at the call's price or the client's table.
func (m *ModelCall) cost() *float64 {
	switch {
	case m.CostUSD != nil:
		return m.CostUSD
	case m.Price != nil:
		return costUSD(*m.Price, m.inputTokens, m.outputTokens)
	default:
		return m.c.prices.cost(m.Model, m.inputTokens, m.outputTokens)
	}
}

func millis(d time.Duration) float64 {
	return math.Round(float64(d.Microseconds())) / 1000
}
