package api_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/expd/expd/internal/testenv"
)

// A client that writes its whole request before reading (as Python's
// urllib and requests do) gets the 413 problem for an oversized body, not
// a reset connection: the server answers from Content-Length and drains
// the refused body.
func TestOversizedBodySeenByAWriteFirstClient(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	for _, tc := range []struct {
		path, header string
		size         int
	}{
		{"/v1/experiments", "Authorization: Bearer " + org.AdminToken, 12 << 20},
		{"/v1/experiments", "", 12 << 20}, // refused for size before credentials
		{"/v1/events", "X-API-Key: " + org.PublishableKey, 12 << 20},
		{"/v1/management-tokens", "Authorization: Bearer " + org.AdminToken, 12 << 20},
	} {
		t.Run(fmt.Sprintf("%s %d", tc.path, tc.size), func(t *testing.T) {
			resp := writeFirst(t, env.Server.URL, tc.path, tc.header, bytes.Repeat([]byte("x"), tc.size))
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusRequestEntityTooLarge || resp.Header.Get("Content-Type") != "application/problem+json" ||
				!strings.Contains(string(body), `"code":"body_too_large"`) {
				t.Fatalf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
		})
	}
}

// writeFirst sends one POST over a raw connection, the whole body before
// reading anything, and returns the answer.
func writeFirst(t *testing.T, base, path, header string, body []byte) *http.Response {
	t.Helper()
	u, _ := url.Parse(base)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	var req bytes.Buffer
	fmt.Fprintf(&req, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", path, u.Host, len(body))
	if header != "" {
		req.WriteString(header + "\r\n")
	}
	req.WriteString("\r\n")
	req.Write(body)
	if _, err := conn.Write(req.Bytes()); err != nil {
		t.Fatalf("write the whole request: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	return resp
}
