package api_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/api"
	"github.com/expd/expd/internal/testenv"
)

// Refusals of what arrives before a route: oversized headers get a 431
// problem up to what net/http reads (api.ServerMaxHeaderBytes); beyond
// it, and for what net/http refuses while parsing (bad header bytes, an
// Expect other than 100-continue, malformed framing), net/http answers
// plain text itself, as docs/problems.md says. Each row is what a client
// sees on a raw connection.
func TestRefusalsBeforeTheRouter(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	auth := "Authorization: Bearer " + org.AdminToken + "\r\n"
	big := func(n int) string { return "X-Padding: " + strings.Repeat("a", n) + "\r\n" }
	for _, c := range []struct {
		name    string
		request string
		status  int
		problem bool // application/problem+json, else net/http's text/plain
	}{
		{"headers just under the limit", "GET /v1/experiments HTTP/1.1\r\nHost: x\r\n" + auth + big(api.MaxHeaderBytes-2048) + "\r\n", http.StatusOK, false},
		{"headers over the limit", "GET /v1/experiments HTTP/1.1\r\nHost: x\r\n" + auth + big(api.MaxHeaderBytes) + "\r\n", http.StatusRequestHeaderFieldsTooLarge, true},
		{"headers over the limit, no credentials", "GET /v1/experiments HTTP/1.1\r\nHost: x\r\n" + big(200<<10) + "\r\n", http.StatusRequestHeaderFieldsTooLarge, true},
		{"headers over what net/http reads", "GET /v1/experiments HTTP/1.1\r\nHost: x\r\n" + big(api.ServerMaxHeaderBytes+8192) + "\r\n", http.StatusRequestHeaderFieldsTooLarge, false},
		{"NUL in a header value", "GET /v1/experiments HTTP/1.1\r\nHost: x\r\nX-Bad: a\x00b\r\n\r\n", http.StatusBadRequest, false},
		{"space in a header name", "GET /v1/experiments HTTP/1.1\r\nHost: x\r\nX Bad: a\r\n\r\n", http.StatusBadRequest, false},
		{"Expect other than 100-continue", "POST /v1/experiments HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\n{}", http.StatusExpectationFailed, false},
		{"bad Content-Length", "POST /v1/experiments HTTP/1.1\r\nHost: x\r\nContent-Length: two\r\n\r\n{}", http.StatusBadRequest, false},
		{"unknown Transfer-Encoding", "POST /v1/experiments HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", http.StatusNotImplemented, false},
		{"no Host", "GET /v1/experiments HTTP/1.1\r\n\r\n", http.StatusBadRequest, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := rawRequest(t, env.Server.URL, c.request)
			body, _ := io.ReadAll(resp.Body)
			ct := resp.Header.Get("Content-Type")
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			switch {
			case c.problem && (ct != "application/problem+json" || !strings.Contains(string(body), `"code":"`+api.CodeHeadersTooLarge+`"`)):
				t.Errorf("%s %s, want a %s problem", ct, body, api.CodeHeadersTooLarge)
			case !c.problem && c.status != http.StatusOK && ct == "application/problem+json":
				t.Errorf("a problem: net/http's own answer changed; update docs/problems.md")
			}
		})
	}
}

// rawRequest writes request as is on a new connection and reads the answer.
func rawRequest(t *testing.T, base, request string) *http.Response {
	t.Helper()
	u, _ := url.Parse(base)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatalf("write: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	return resp
}
