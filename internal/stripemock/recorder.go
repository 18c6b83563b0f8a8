package stripemock

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"sync"
)

// Request is one API call as the client sent it: stripe-mock answers with
// canned objects, so tests assert on what was sent.
type Request struct {
	Method string
	Path   string
	Form   url.Values // the form-encoded body (Stripe's request format)
	Header http.Header
}

// Recorder is an http.RoundTripper that keeps every request and forwards it.
type Recorder struct {
	mu       sync.Mutex
	requests []Request
	next     http.RoundTripper
}

func newRecorder() *Recorder { return &Recorder{next: http.DefaultTransport} }

// RoundTrip records req and sends it on.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		_ = req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		form = url.Values{}
	}
	r.mu.Lock()
	r.requests = append(r.requests, Request{Method: req.Method, Path: req.URL.Path, Form: form, Header: req.Header.Clone()})
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

// Requests returns the recorded requests to path, oldest first.
func (r *Recorder) Requests(path string) []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Request
	for _, q := range r.requests {
		if q.Path == path {
			out = append(out, q)
		}
	}
	return out
}
