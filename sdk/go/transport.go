package expd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// Transport returns an http.RoundTripper that measures model calls made
// through it: give it to any provider SDK that accepts an *http.Client
// (openai-go: option.WithHTTPClient(&http.Client{Transport: c.Transport("exp", nil)})).
// A request whose context carries a user (WithUser) records an exposure and
// a model_call with latency, model, tokens, text and errors read from the
// OpenAI-style JSON answer or its server-sent event stream (time to first
// token included); other requests pass through untouched. base nil means
// http.DefaultTransport. A measured call's id (for Score) is set on its
// response as the Expd-Call-Id header (openai-go: option.WithResponseInto)
// and is LastCallID of the request's context.
func (c *Client) Transport(experiment string, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &measuringTransport{c: c, experiment: experiment, base: base}
}

// CallIDHeader is the response header that carries a measured call's id.
const CallIDHeader = "Expd-Call-Id"

type measuringTransport struct {
	c          *Client
	experiment string
	base       http.RoundTripper
}

// requestFields is what a provider request says about the call.
type requestFields struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	Messages json.RawMessage `json:"messages"`
	Input    json.RawMessage `json:"input"`
	Prompt   json.RawMessage `json:"prompt"`
}

func (t *measuringTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	user, ok := UserFrom(req.Context())
	if !ok {
		return t.base.RoundTrip(req)
	}
	var fields requestFields
	if req.Body != nil && req.Body != http.NoBody {
		raw, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		// The caller's request must not change: send a clone with a fresh body.
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(raw))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
		_ = json.Unmarshal(raw, &fields)
	}
	call := t.c.StartModelCall(req.Context(), t.experiment, user)
	call.Model = fields.Model
	for _, p := range []json.RawMessage{fields.Messages, fields.Input, fields.Prompt} {
		if len(p) > 0 {
			var s string
			if json.Unmarshal(p, &s) == nil {
				call.Prompt = s
			} else {
				call.Prompt = string(p)
			}
			break
		}
	}
	res, err := t.base.RoundTrip(req)
	if err != nil {
		call.Finish(err)
		return nil, err
	}
	if res.Header == nil {
		res.Header = http.Header{}
	}
	res.Header.Set(CallIDHeader, call.ID)
	if res.StatusCode >= 400 {
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(raw))
		call.Finish(providerError(res.StatusCode, raw))
		return res, nil
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		res.Body = &measuredStream{body: res.Body, call: call, acc: &accumulator{}}
		return res, nil
	}
	raw, readErr := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(raw))
	acc := &accumulator{}
	acc.observe(raw)
	acc.fill(call)
	call.Finish(readErr)
	return res, nil
}

func providerError(status int, body []byte) error {
	var p struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &p) == nil && p.Error.Message != "" {
		return fmt.Errorf("HTTP %d %s: %s", status, p.Error.Type, p.Error.Message)
	}
	return fmt.Errorf("HTTP %d", status)
}

// accumulator collects model, usage and text from an answer or stream chunks.
type accumulator struct {
	model                string
	input, output, total *int
	text                 strings.Builder
	sawText              bool
}

type usage struct {
	PromptTokens     *int `json:"prompt_tokens"`
	CompletionTokens *int `json:"completion_tokens"`
	InputTokens      *int `json:"input_tokens"`
	OutputTokens     *int `json:"output_tokens"`
	TotalTokens      *int `json:"total_tokens"`
}

type chunk struct {
	Model   string `json:"model"`
	Usage   *usage `json:"usage"`
	Type    string `json:"type"`
	Delta   any    `json:"delta"`
	Choices []struct {
		Delta   struct{ Content *string } `json:"delta"`
		Message struct{ Content *string } `json:"message"`
		Text    *string                   `json:"text"`
	} `json:"choices"`
	OutputText *string `json:"output_text"`
	Output     []struct {
		Content []struct {
			Text *string `json:"text"`
		} `json:"content"`
	} `json:"output"`
	Response *chunk `json:"response"`
}

func (a *accumulator) observe(raw []byte) {
	var c chunk
	if json.Unmarshal(raw, &c) != nil {
		return
	}
	a.take(&c)
	if c.Type == "response.output_text.delta" {
		if s, ok := c.Delta.(string); ok {
			a.text.WriteString(s)
			a.sawText = true
		}
	}
	if c.Response != nil {
		a.take(c.Response)
	}
}

func (a *accumulator) take(c *chunk) {
	if c.Model != "" {
		a.model = c.Model
	}
	if u := c.Usage; u != nil {
		a.input = first(u.PromptTokens, u.InputTokens)
		a.output = first(u.CompletionTokens, u.OutputTokens)
		a.total = u.TotalTokens
	}
	write := func(s *string) {
		if s != nil {
			a.text.WriteString(*s)
			a.sawText = true
		}
	}
	for _, ch := range c.Choices {
		write(ch.Delta.Content)
		write(ch.Message.Content)
		write(ch.Text)
	}
	write(c.OutputText)
	if c.OutputText == nil {
		for _, o := range c.Output {
			for _, p := range o.Content {
				write(p.Text)
			}
		}
	}
}

func first(a, b *int) *int {
	if a != nil {
		return a
	}
	return b
}

func (a *accumulator) fill(call *ModelCall) {
	if a.model != "" {
		call.Model = a.model
	}
	if a.input != nil || a.total != nil {
		in, out, total := deref(a.input), deref(a.output), -1
		if a.total != nil {
			total = *a.total
		}
		call.SetUsage(in, out, total)
	}
	if a.sawText {
		call.Response = a.text.String()
	}
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// measuredStream passes a server-sent event stream through unchanged,
// reading its `data:` lines as they go by; the call is recorded at the end
// of the stream, on a read error, or when the caller closes it.
type measuredStream struct {
	body    io.ReadCloser
	call    *ModelCall
	acc     *accumulator
	pending []byte
	once    sync.Once
}

func (s *measuredStream) Read(p []byte) (int, error) {
	n, err := s.body.Read(p)
	if n > 0 {
		s.call.FirstToken()
		s.scan(p[:n])
	}
	if err == io.EOF {
		s.end(nil)
	} else if err != nil {
		s.end(err)
	}
	return n, err
}

func (s *measuredStream) scan(b []byte) {
	s.pending = append(s.pending, b...)
	consumed := 0
	for {
		i := bytes.IndexByte(s.pending[consumed:], '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimRight(s.pending[consumed:consumed+i], "\r")
		consumed += i + 1
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = bytes.TrimSpace(data)
			if !bytes.Equal(data, []byte("[DONE]")) {
				s.acc.observe(data)
			}
		}
	}
	s.pending = append(s.pending[:0], s.pending[consumed:]...)
}

func (s *measuredStream) end(err error) {
	s.once.Do(func() {
		s.acc.fill(s.call)
		s.call.Finish(err)
	})
}

func (s *measuredStream) Close() error {
	s.end(nil)
	return s.body.Close()
}
