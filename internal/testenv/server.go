package testenv

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/gin-gonic/gin"
	"gorm.io/gorm"

	"github.com/expd/expd/api"
	"github.com/expd/expd/auth"
)

// Env is a real router over a real database, served by httptest.
type Env struct {
	DB     *gorm.DB
	Signer *auth.Signer
	Server *httptest.Server
	Deps   api.Deps
}

var (
	signerOnce sync.Once
	signer     *auth.Signer
)

// Signer is one signing key per test binary (RSA generation is slow).
func Signer(t testing.TB) *auth.Signer {
	signerOnce.Do(func() {
		s, err := auth.NewSigner()
		if err != nil {
			t.Fatalf("signer: %v", err)
		}
		signer = s
	})
	return signer
}

// New starts the router on a fresh database. tune may adjust the deps
// (for example to add a Temporal client) before the router is built.
func New(t testing.TB, tune ...func(*api.Deps)) *Env {
	t.Helper()
	gin.SetMode(gin.TestMode)
	s := Signer(t)
	db := DB(t)
	deps := api.Deps{DB: db, Verifier: s.Verifier(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Secrets: Keyring(t)}
	for _, f := range tune {
		f(&deps)
	}
	srv := NewServer(t, api.NewRouter(deps))
	return &Env{DB: db, Signer: s, Server: srv, Deps: deps}
}

// NewOrg creates a tenant in this env.
func (e *Env) NewOrg(t testing.TB) Org { return NewOrg(t, e.DB, e.Signer) }

// Response is a read HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test on error.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %d body %q: %v", r.Status, r.Body, err)
	}
}

// Do sends a request. body may be nil, a []byte/string sent as is, or any
// value sent as JSON. headers are name, value pairs.
func (e *Env) Do(t testing.TB, method, path string, body any, headers ...string) Response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, e.Server.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.Server.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// Bearer is the header pair of a session token.
func Bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

// APIKey is the header pair of an API key.
func APIKey(key string) []string { return []string{"X-API-Key", key} }

// Problem is the decoded problem+json body.
type Problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	Code      string `json:"code"`
	RequestID string `json:"request_id"`
	Errors    []struct {
		Field  string `json:"field"`
		Reason string `json:"reason"`
	} `json:"errors"`
}

// ExpectProblem checks that r is a problem+json answer of status and
// returns it.
func ExpectProblem(t testing.TB, r Response, status int) Problem {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("content type %q, want application/problem+json", ct)
	}
	var p Problem
	r.JSON(t, &p)
	if p.Status != status || p.Title == "" || p.Type == "" || p.Detail == "" || p.RequestID == "" {
		t.Fatalf("incomplete problem: %+v", p)
	}
	return p
}

// HasFieldError tells whether the problem names field.
func (p Problem) HasFieldError(field string) bool {
	for _, e := range p.Errors {
		if e.Field == field {
			return true
		}
	}
	return false
}
