package testenv

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/expd/expd/api"
)

// The contract: every request the tests send through a testenv server and
// every answer it gets are checked against api/openapi.json, so the
// document cannot drift from the handlers.
var (
	contractOnce   sync.Once
	contractDoc    *openapi3.T
	contractRouter routers.Router
	contractErr    error
	recordMu       sync.Mutex
)

// OpenAPI loads and validates the embedded OpenAPI document (once per test
// binary) and returns it with a kin-openapi router over it.
func OpenAPI(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	contractOnce.Do(func() {
		// Bodies the document describes as plain strings.
		for _, ct := range []string{"application/x-ndjson", "application/x-protobuf", "text/html", "text/css", "text/javascript", "image/svg+xml"} {
			openapi3filter.RegisterBodyDecoder(ct, openapi3filter.FileBodyDecoder)
		}
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(api.OpenAPIDocument())
		if err != nil {
			contractErr = fmt.Errorf("load api/openapi.json: %w", err)
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			contractErr = fmt.Errorf("api/openapi.json is not a valid OpenAPI document: %w", err)
			return
		}
		// The document's server URL is a placeholder; routes match on path.
		doc.Servers = nil
		r, err := gorillamux.NewRouter(doc)
		if err != nil {
			contractErr = fmt.Errorf("router over api/openapi.json: %w", err)
			return
		}
		contractDoc, contractRouter = doc, r
	})
	if contractErr != nil {
		t.Fatal(contractErr)
	}
	return contractDoc, contractRouter
}

// NewServer serves h (an api.NewRouter) over httptest for the test, with
// every request and response checked against the OpenAPI document: a
// mismatch fails t. Every server the tests talk to should come from here.
func NewServer(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(Contract(t, h))
	t.Cleanup(srv.Close)
	return srv
}

// Contract wraps h so each request and its response are validated against
// the OpenAPI document; a mismatch is reported with t.Errorf.
func Contract(t testing.TB, h http.Handler) http.Handler {
	t.Helper()
	_, router := OpenAPI(t)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The handler streams the body; the validator sees a copy of
		// its first maxCheckedBody bytes (an import of many MiB is
		// checked without its body rather than held in memory twice).
		body := &teeBody{ReadCloser: r.Body}
		r.Body = body
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		if rec.status < 400 {
			_, _ = io.Copy(io.Discard, body) // what an accepting handler left unread
		}
		var reqBody []byte
		if !body.truncated {
			reqBody = body.buf.Bytes()
		}
		if err := checkExchange(router, r, reqBody, body.truncated, rec); err != nil {
			t.Errorf("OpenAPI contract (api/openapi.json): %s %s -> %d: %v", r.Method, r.URL.RequestURI(), rec.status, err)
		}
	})
}

// maxCheckedBody is the largest request body the contract check validates.
const maxCheckedBody = 1 << 20

// teeBody keeps a copy of up to maxCheckedBody bytes of what is read.
type teeBody struct {
	io.ReadCloser
	buf       bytes.Buffer
	truncated bool
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if !b.truncated {
		if b.buf.Len()+n > maxCheckedBody {
			b.truncated = true
			b.buf = bytes.Buffer{}
		} else {
			b.buf.Write(p[:n])
		}
	}
	return n, err
}

// recorder passes the response through and keeps a copy.
type recorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wroteHeader = true
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func checkExchange(router routers.Router, r *http.Request, reqBody []byte, bodyTooLarge bool, rec *recorder) error {
	// A fresh copy of the request for the validator (the handler read the body).
	req := r.Clone(context.Background())
	if r.Header.Get("Content-Encoding") == "gzip" { // POST /v1/traces: the document describes the decoded body
		if zr, err := gzip.NewReader(bytes.NewReader(reqBody)); err == nil {
			if plain, err := io.ReadAll(zr); err == nil {
				reqBody = plain
			}
		}
	}
	req.Body = io.NopCloser(bytes.NewReader(reqBody))
	route, params, err := router.FindRoute(req)
	if err != nil {
		switch {
		case isPreflight(r):
			// CORS preflights are answered by the CORS middleware on every
			// dashboard route (api/cors.go, docs/operations.md), not operations.
			return nil
		case rec.status == http.StatusNotFound || rec.status == http.StatusMethodNotAllowed:
			// No such route or method: under /v1 the router's problem
			// answers; elsewhere (dashboard pages, assets) HTML or nothing.
			if strings.HasPrefix(r.URL.Path, "/v1/") {
				return expectProblem(rec)
			}
			return nil
		}
		return fmt.Errorf("the document has no operation for this request: %w", err)
	}
	if path := os.Getenv("EXPD_CONTRACT_RECORD"); path != "" {
		record(path, r, route.Path, reqBody, rec)
		return nil
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true, ExcludeRequestBody: bodyTooLarge}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil && rec.status < 400 {
		// A request the document calls invalid must be refused.
		return fmt.Errorf("request does not match the document but was answered %d: %w", rec.status, err)
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 rec.status,
		Header:                 rec.Header(),
		Body:                   io.NopCloser(bytes.NewReader(rec.body.Bytes())),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return fmt.Errorf("response does not match the document: %w; body %.300s", err, rec.body.Bytes())
	}
	return nil
}

func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" && r.Header.Get("Access-Control-Request-Method") != ""
}

func expectProblem(rec *recorder) error {
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		return fmt.Errorf("no operation in the document, and the answer is not a problem (content type %q)", ct)
	}
	return nil
}

// record appends the exchange to path (EXPD_CONTRACT_RECORD): a tool to see
// what the handlers answer when writing the document, not a test.
func record(path string, r *http.Request, tmpl string, reqBody []byte, rec *recorder) {
	recordMu.Lock()
	defer recordMu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	cut := func(b []byte) string {
		s := string(b)
		if len(s) > 1500 {
			s = s[:1500]
		}
		return s
	}
	line, _ := json.Marshal(map[string]any{
		"op": r.Method + " " + tmpl, "status": rec.status, "ctype": rec.Header().Get("Content-Type"),
		"req_ctype": r.Header.Get("Content-Type"), "query": r.URL.RawQuery,
		"req": cut(reqBody), "resp": cut(rec.body.Bytes()), "hdr": strings.Join(headerNames(rec.Header()), ","),
	})
	f.Write(append(line, '\n'))
}

func headerNames(h http.Header) []string {
	var out []string
	for k := range h {
		out = append(out, k)
	}
	return out
}
