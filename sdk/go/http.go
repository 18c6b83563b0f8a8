package expd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// Version is the client's version, its one source (the module's release tags
// carry the same number: sdk/go/vX.Y.Z).
const Version = "0.1.0"

const userAgent = "expd-go/" + Version

type httpClient struct {
	base, key string
	client    *http.Client
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request; an error means no HTTP answer.
func (h *httpClient) do(ctx context.Context, method, path string, body []byte, header map[string]string) (*response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-API-Key", h.key)
	req.Header.Set("User-Agent", userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := h.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	return &response{status: res.StatusCode, header: res.Header, body: raw}, nil
}

// retryAfter parses Retry-After (seconds or an HTTP date); ok false when absent or bad.
func retryAfter(h http.Header) (time.Duration, bool) {
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return time.Duration(max(0, s) * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t)), true
	}
	return 0, false
}

// backoff is exponential with full jitter; a server's Retry-After wins (capped).
func backoff(attempt int, base, cap time.Duration, after time.Duration, hasAfter bool) time.Duration {
	if hasAfter {
		return min(after, cap)
	}
	ceiling := min(cap, base<<min(attempt, 30))
	return ceiling/2 + time.Duration(rand.Int64N(int64(ceiling/2)+1))
}
