package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client calls the expd HTTP API.
type Client struct {
	BaseURL   string
	Token     string // Authorization: Bearer on dashboard routes
	SecretKey string // X-API-Key on events import
	HTTP      *http.Client
}

// ProblemError is a problem+json answer (or any non-2xx).
type ProblemError struct {
	Status int          `json:"status"`
	Title  string       `json:"title"`
	Code   string       `json:"code"`
	Detail string       `json:"detail"`
	Hint   string       `json:"hint"`
	Errors []fieldError `json:"errors"`
}

type fieldError struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

func (p *ProblemError) Error() string {
	msg := p.Detail
	if msg == "" {
		msg = p.Title
	}
	if msg == "" {
		msg = http.StatusText(p.Status)
	}
	return fmt.Sprintf("%s (HTTP %d%s)", msg, p.Status, codeSuffix(p.Code))
}

func codeSuffix(code string) string {
	if code == "" {
		return ""
	}
	return ", " + code
}

// defaultTimeout bounds one API call; imports stream without one.
const defaultTimeout = 60 * time.Second

// Do sends a JSON request to a dashboard route and decodes a 2xx answer
// into out (when not nil).
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	return c.DoWith(ctx, method, path, body, out, "Content-Type", "application/json")
}

// DoWith is Do with request headers (name, value pairs; the first may
// set the body's Content-Type).
func (c *Client) DoWith(ctx context.Context, method, path string, body, out any, headers ...string) error {
	var rd io.Reader
	if body != nil {
		b, ok := body.([]byte)
		if !ok {
			var err error
			if b, err = json.Marshal(body); err != nil {
				return fmt.Errorf("encode request: %w", err)
			}
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, defaultTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rd)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] != "Content-Type" || rd != nil {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	return c.send(req, out)
}

// send runs a request and decodes its answer.
func (c *Client) send(req *http.Request, out any) error {
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "expd-cli")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach %s: %w", c.BaseURL, unwrapURLError(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read answer of %s %s: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode >= 300 {
		p := &ProblemError{Status: resp.StatusCode}
		if json.Unmarshal(b, p) != nil || p.Status == 0 {
			p.Status, p.Detail = resp.StatusCode, strings.TrimSpace(string(b))
		}
		return p
	}
	if out == nil || len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("unexpected answer of %s %s: %w", req.Method, req.URL.Path, err)
	}
	return nil
}

// unwrapURLError drops net/url's "Get \"...\": " prefix: the caller
// already names the server.
func unwrapURLError(err error) error {
	type unwrapper interface{ Unwrap() error }
	if u, ok := err.(unwrapper); ok && u.Unwrap() != nil {
		return u.Unwrap()
	}
	return err
}
